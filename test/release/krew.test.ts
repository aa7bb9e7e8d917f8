// The kubectl plugin as the release packages it for krew (deploy/krew/package.sh): the real krew
// installs it from the manifest, downloading the archive from the manifest's URL (a server on
// 127.0.0.1) and checking its sha256, and the real kubectl then runs `kubectl npd` against the real
// kube-apiserver from a folder with no node_modules: the plugin's bundle needs only Node.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ControlPlane, KUBECTL, startControlPlane } from '../e2e/harness/controlplane.ts';
import { run } from '../e2e/harness/processes.ts';
import { REPO } from '../support/agent-process.ts';
import { parseVars } from '../support/script-vars.ts';
import { ensureReleaseTools } from './tools.ts';

const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

describe('the kubectl plugin through krew', () => {
  let krew: string;
  let dir: string;
  let server: Server;
  let cp: ControlPlane;
  let manifest: string;
  let downloads = 0;

  before(
    async () => {
      krew = (await ensureReleaseTools()).krew;
      dir = mkdtempSync(join(tmpdir(), 'npd-krew-'));
      const out = join(dir, 'dl');
      server = createServer((req, res) => {
        const file = join(out, basename(req.url ?? ''));
        if (!existsSync(file)) return void res.writeHead(404).end();
        downloads++;
        res.writeHead(200, { 'Content-Type': 'application/gzip' }).end(readFileSync(file));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/dl`;
      const args = [`--version=${VERSION}`, `--out=${out}`, `--uri-base=${base}`];
      const r = await run('bash', [join(REPO, 'deploy/krew/package.sh'), ...args], { timeoutMs: 300_000 });
      assert.equal(r.code, 0, r.stderr);
      manifest = parseVars(r.stdout).get('KREW_MANIFEST') ?? '';
      assert.match(
        readFileSync(manifest, 'utf8'),
        new RegExp(`uri: ${base}/kubectl-npd-${VERSION}\\.tar\\.gz`),
      );
      cp = await startControlPlane();
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    await cp?.stop();
    server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** krew and kubectl with only Node's folder, the krew bin folder and the system on PATH. */
  const env = (root: string) => ({
    ...process.env,
    KREW_ROOT: root,
    KREW_NO_UPGRADE_CHECK: '1',
    PATH: `${join(root, 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`,
  });

  test('krew installs it from the manifest and kubectl runs it against the API server', async () => {
    const root = join(dir, 'krew-root');
    const install = await run(krew, ['install', `--manifest=${manifest}`], {
      env: env(root),
      timeoutMs: 120_000,
    });
    assert.equal(install.code, 0, install.stderr);
    assert.equal(downloads, 1, 'the archive came from the manifest’s URL');
    const list = await run(KUBECTL, ['plugin', 'list'], { env: env(root) });
    assert.match(list.stdout, /krew-root\/bin\/kubectl-npd/, list.stderr);
    const npd = await run(KUBECTL, ['npd', '-o', 'json', `--kubeconfig=${cp.adminKubeconfig}`], {
      env: { ...env(root), KUBECONFIG: '' },
    });
    assert.equal(npd.code, 0, npd.stderr);
    const json = JSON.parse(npd.stdout) as { nodes: { name: string }[] };
    assert.deepEqual(
      json.nodes.map((n) => n.name),
      [cp.nodeName],
    );
  });

  test('control: krew refuses an archive whose sha256 is not the manifest’s', async () => {
    const root = join(dir, 'krew-root-tampered');
    const tampered = join(dir, 'tampered.yaml');
    writeFileSync(
      tampered,
      readFileSync(manifest, 'utf8').replace(/sha256: [0-9a-f]{64}/, `sha256: ${'0'.repeat(64)}`),
    );
    const install = await run(krew, ['install', `--manifest=${tampered}`], {
      env: env(root),
      timeoutMs: 120_000,
    });
    assert.notEqual(install.code, 0, install.stdout);
    assert.match(install.stderr, /sha256|checksum/i);
    assert.equal(existsSync(join(root, 'bin', 'kubectl-npd')), false);
  });
});
