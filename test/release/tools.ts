/**
 * The release pipeline's real tools (crane, syft, cosign, actionlint, krew from their Go modules, built and
 * cached by test/tools/release-tools/build.sh) and a real OCI registry on 127.0.0.1 (`crane registry
 * serve`, blobs on disk) for the release tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, REPO, waitFor } from '../support/agent-process.ts';
import { needVar, scriptVars } from '../support/script-vars.ts';

export const RELEASE_TOOLS_SCRIPT = join(REPO, 'test', 'tools', 'release-tools', 'build.sh');

export interface ReleaseTools {
  readonly crane: string;
  readonly syft: string;
  readonly cosign: string;
  readonly actionlint: string;
  readonly krew: string;
}

let cached: Promise<ReleaseTools> | undefined;

export function ensureReleaseTools(): Promise<ReleaseTools> {
  const need = (vars: Map<string, string>, k: string) => needVar(vars, k, RELEASE_TOOLS_SCRIPT);
  cached ??= scriptVars(RELEASE_TOOLS_SCRIPT).then((v) => ({
    crane: need(v, 'CRANE'),
    syft: need(v, 'SYFT'),
    cosign: need(v, 'COSIGN'),
    actionlint: need(v, 'ACTIONLINT'),
    krew: need(v, 'KREW'),
  }));
  return cached;
}

export interface Registry {
  /** host:port, e.g. 127.0.0.1:40123 */
  readonly host: string;
  stop(): Promise<void>;
}

/** A registry on 127.0.0.1 that lives as long as the test file. */
export async function startRegistry(crane: string): Promise<Registry> {
  const [port, disk] = [await freePort(), mkdtempSync(join(tmpdir(), 'npd-registry-'))];
  const host = `127.0.0.1:${port}`;
  const child: ChildProcess = spawn(crane, ['registry', 'serve', `--address=${host}`, `--disk=${disk}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-8000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await waitFor(
    async () => (await fetch(`http://${host}/v2/`)).ok,
    30_000,
    () => log,
  );
  return {
    host,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(disk, { recursive: true, force: true });
    },
  };
}
