// `.ci/dev start` on a fresh checkout: the first npm ci says what it does and roughly how long, and
// shows the build instead of a silent spinner; a second start skips it. npm and node are stand-ins.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../support/agent-process.ts';

test('.ci/dev start announces the first npm ci, runs it with its build output, then skips it', () => {
  const root = mkdtempSync(join(tmpdir(), 'npd-dev-'));
  mkdirSync(join(root, '.ci'));
  copyFileSync(join(REPO, '.ci/dev'), join(root, '.ci/dev'));
  writeFileSync(join(root, '.ci/node24.sh'), '# stand-in: node is on PATH\n');
  writeFileSync(join(root, 'package-lock.json'), '{}\n');
  const bin = join(root, 'bin');
  mkdirSync(bin);
  const script = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  script(
    'npm',
    'echo "$@" >> "$NPM_LOG"; mkdir -p node_modules/re2/build/Release; touch node_modules/re2/build/Release/re2.node; sleep 1; touch node_modules/.package-lock.json',
  );
  script('node', 'echo "agent $*"');
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NPM_LOG: join(root, 'npm.log') };
  const run = () =>
    spawnSync('bash', [join(root, '.ci/dev'), 'start', '--version'], { cwd: root, env, encoding: 'utf8' });
  const first = run();
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stderr, /installing the npm dependencies \(npm ci, once\): about 6 minutes/);
  assert.match(first.stderr, /compiling the re2 native addon/);
  assert.match(first.stderr, /dependencies installed in \d+ s/);
  assert.match(readFileSync(env.NPM_LOG, 'utf8'), /^ci .*--foreground-scripts/m);
  assert.match(first.stdout, /agent --import tsx src\/main.ts --version/);
  const second = run();
  assert.equal(second.status, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /npm ci/, 'installed: nothing to say');
  assert.equal(readFileSync(env.NPM_LOG, 'utf8').split('\n').filter(Boolean).length, 1);
});
