// What the built image holds (test/container/build-image.sh), checked inside it with its own Node:
// /app has only the runtime files, no dev-only package and no @kubernetes/client-node, the native
// addons and every external module of the bundle load, journalctl, tini and sh run, and --version names
// the commit and build date the build baked in.
//   npm run test:container        (builds the image first)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from '../deploy/support.ts';
import { containerSkip, IMAGE, imageExists, RUNTIME_FLAGS, runImage } from './podman.ts';

const skip = containerSkip();

const RUN = ['run', '--rm', '--pull=never', ...RUNTIME_FLAGS, '--network=none'];
const inImage = (entrypoint: string | undefined, args: readonly string[]): string =>
  runImage(IMAGE, ['--network=none'], entrypoint, args);

const nodeEval = (code: string): string => inImage('node', ['--input-type=module', '-e', code]);

/** A directory listing made in the image (it has no ls). */
const ls = (dir: string): string[] =>
  JSON.parse(
    nodeEval(
      `import { readdirSync } from 'node:fs'; process.stdout.write(JSON.stringify(readdirSync(${JSON.stringify(dir)}).sort()))`,
    ),
  ) as string[];

describe('the built image', { skip }, () => {
  test('exists', () => assert.ok(imageExists(), `${IMAGE}: run test/container/build-image.sh`));

  test('/app holds package.json, production node_modules, dist and rules; no dev-only package', () => {
    assert.deepEqual(ls('/app'), ['dist', 'node_modules', 'package.json', 'rules']);
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([p, v]) => v.dev === true && p.startsWith('node_modules/'))
      .map(([p]) => p);
    assert.ok(devOnly.length > 0, 'the lockfile marks dev-only packages');
    const present = nodeEval(
      `import { existsSync } from 'node:fs';
       const paths = ${JSON.stringify([...devOnly, 'node_modules/@kubernetes/client-node'])};
       process.stdout.write(JSON.stringify(paths.filter((p) => existsSync('/app/' + p))));`,
    );
    assert.deepEqual(JSON.parse(present), [], 'dev-only packages and client-node are not in the image');
    assert.deepEqual(ls('/app/rules'), readdirSync(join(ROOT, 'rules')).sort());
  });

  test('re2 (stripped, without its build tree), koffi and every external of the bundle load', () => {
    const out = nodeEval(
      `import { readFileSync, readdirSync } from 'node:fs';
       import { createRequire } from 'node:module';
       const require = createRequire('/app/dist/main.js');
       const RE2 = require('re2');
       const ok = new RE2('a(b+)c').exec('xabbbc')[1] === 'bbb';
       const pkg = JSON.parse(readFileSync('/app/package.json', 'utf8'));
       for (const dep of Object.keys(pkg.dependencies)) require(dep);
       process.stdout.write(JSON.stringify({ ok, build: readdirSync('/app/node_modules/re2/build/Release') }));`,
    );
    assert.deepEqual(JSON.parse(out), { ok: true, build: ['re2.node'] });
  });

  test('journalctl, tini and sh run; no package manager', () => {
    assert.match(inImage('journalctl', ['--version']), /^systemd \d+/);
    assert.match(inImage('/usr/bin/tini', ['--version']), /tini version/);
    assert.equal(inImage('/bin/sh', ['-c', 'echo ok']), 'ok\n');
    assert.equal(
      nodeEval(
        `import { existsSync } from 'node:fs'; process.stdout.write(String(['/usr/bin/apt-get', '/usr/bin/dpkg', '/usr/local/bin/npm'].some(existsSync)))`,
      ),
      'false',
    );
  });

  test('--version names the package version, the commit and the build date', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    const out = inImage(undefined, ['--version']).trim();
    const head = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short=12', 'HEAD'], {
      encoding: 'utf8',
    }).trim();
    assert.match(
      out,
      new RegExp(
        `^node-problem-detector ${version.replaceAll('.', '\\.')} \\(commit ${head}, built \\d{4}-\\d\\d-\\d\\dT`,
      ),
    );
  });

  test('an auth-provider kubeconfig user fails at start, saying how to add client-node', () => {
    const dir = mkdtempSync(join(tmpdir(), 'npd-ct-kc-'));
    try {
      // exec users need no client-node (the agent runs the plugin itself); auth-provider ones do.
      const user = { 'auth-provider': { name: 'oidc', config: {} } };
      const kubeconfig = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'eks', user }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'eks' } }],
        'current-context': 'x',
      };
      writeFileSync(join(dir, 'config'), JSON.stringify(kubeconfig), { mode: 0o644 });
      chmodSync(dir, 0o755); // the image's default user is uid 1000
      const r = spawnSync(
        'podman',
        [...RUN, `--volume=${dir}:/kc:ro`, IMAGE, '--kubeconfig=/kc/config', '--hostname-override=n1'],
        { encoding: 'utf8', timeout: 60_000 },
      );
      assert.notEqual(r.status, 0, r.stdout);
      assert.match(
        r.stdout + r.stderr,
        /user "eks" uses auth-provider, which needs @kubernetes\/client-node; it is not installed.*npm install @kubernetes\/client-node@/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
