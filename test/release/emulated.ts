/**
 * The released images pulled back from the registry and run with podman: an image of another
 * platform (arm64 on this amd64 machine) runs under qemu user emulation through binfmt_misc.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUNTIME_FLAGS, runImage } from '../container/podman.ts';
import { freePort, REPO, waitFor } from '../support/agent-process.ts';

const CASES = join(REPO, 'test', 'golden', 'cases');

/** Copies the `arch` image of a released index into podman's storage; returns its local name. */
export function pull(ref: string, arch: string): string {
  const local = `localhost/npd-release-pulled:${arch}`;
  execFileSync('skopeo', [
    'copy',
    '--quiet',
    '--src-tls-verify=false',
    `--override-arch=${arch}`,
    `docker://${ref}`,
    `containers-storage:${local}`,
  ]);
  return local;
}

export function architecture(image: string): string {
  return execFileSync('podman', ['image', 'inspect', '--format', '{{.Architecture}}', image], {
    encoding: 'utf8',
  }).trim();
}

interface CaseSpec {
  readonly configs: readonly string[];
  readonly format: string;
  readonly bootTime?: string;
  readonly args?: readonly string[];
}

/** The replay command of one golden case, with the repository mounted at /repo. */
function replayCommand(name: string): string {
  const spec = JSON.parse(readFileSync(join(CASES, name, 'case.json'), 'utf8')) as CaseSpec;
  const args = [
    ...spec.configs.flatMap((c) => ['--config', `/repo/${c}`]),
    '--format',
    spec.format,
    ...(spec.bootTime ? ['--boot-time', spec.bootTime] : []),
    ...(spec.args ?? []),
    `/repo/test/golden/cases/${name}/input.log`,
  ];
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return `node /app/dist/main.js replay ${quoted} > '/out/${name}.jsonl'`;
}

/**
 * Every golden case replayed by the image's own Node and bundle, in one container: case name to the
 * replay's stdout.
 */
export function replayGolden(image: string): Map<string, string> {
  const names = readdirSync(CASES).sort();
  const out = mkdtempSync(join(tmpdir(), 'npd-replay-'));
  try {
    const script = ['set -e', ...names.map(replayCommand)].join('\n');
    runImage(image, ['--network=none', '--user=0', `-v=${REPO}:/repo:ro`, `-v=${out}:/out`], 'sh', [
      '-c',
      script,
    ]);
    return new Map(names.map((n) => [n, readFileSync(join(out, `${n}.jsonl`), 'utf8')]));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export function expectedGolden(): Map<string, string> {
  const names = readdirSync(CASES).sort();
  return new Map(names.map((n) => [n, readFileSync(join(CASES, n, 'expected.jsonl'), 'utf8')]));
}

/**
 * A short standalone start (no cluster), privileged as the DaemonSet runs it so /dev/kmsg opens:
 * the HTTP status of the first /healthz answer within `timeoutMs`.
 */
export async function standaloneHealthz(image: string, timeoutMs: number): Promise<number> {
  const [port, promPort] = [await freePort(), await freePort()];
  const name = `npd-release-${port}`;
  const args = [
    '--enable-k8s-exporter=false',
    '--address=127.0.0.1',
    `--port=${port}`,
    '--prometheus-address=127.0.0.1',
    `--prometheus-port=${promPort}`,
  ];
  execFileSync('podman', [
    'run',
    '-d',
    '--rm',
    `--name=${name}`,
    '--pull=never',
    ...RUNTIME_FLAGS,
    '--privileged',
    '--network=host',
    image,
    ...args,
  ]);
  try {
    let status = 0;
    await waitFor(
      async () => {
        status = (await fetch(`http://127.0.0.1:${port}/healthz`)).status;
        return true;
      },
      timeoutMs,
      () => execFileSync('podman', ['logs', name], { encoding: 'utf8' }),
    );
    return status;
  } finally {
    execFileSync('podman', ['rm', '--force', '--time=0', name], { stdio: 'ignore' });
  }
}
