// The exec credential runner against real plugin scripts: a plugin that hangs (and forks) is killed
// with its process group at the deadline, one that floods stdout is killed at the output cap, and
// failures say why. Tokens are cached until they expire, and one run serves every waiting request.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { systemClock } from '../../../src/core/clock.ts';
import {
  CredentialError,
  EXEC_MAX_OUTPUT_BYTES,
  execAuth,
  parseExecConfig,
} from '../../../src/kube/exec-credential.ts';

const dir = mkdtempSync(join(tmpdir(), 'npd-exec-cred-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const V1 = 'client.authentication.k8s.io/v1';

function plugin(name: string, body: string) {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return parseExecConfig({ apiVersion: V1, command: file }, dir);
}

const credential = (token: string, exp?: string) =>
  JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: { token, expirationTimestamp: exp } });

async function failure(p: Promise<unknown>): Promise<CredentialError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof CredentialError, String(err));
    return err;
  }
  assert.fail('expected a CredentialError');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('exec credential plugins', () => {
  it('returns the token, passes KUBERNETES_EXEC_INFO and the env, and caches the token', async () => {
    const runs = join(dir, 'runs');
    const cfg = parseExecConfig(
      {
        apiVersion: V1,
        command: './ok.sh',
        env: [{ name: 'TOKEN', value: 'tok-1' }],
      },
      dir,
    );
    writeFileSync(
      join(dir, 'ok.sh'),
      `#!/bin/sh\necho run >> ${runs}\necho "$KUBERNETES_EXEC_INFO" > ${join(dir, 'info')}\n` +
        `printf '%s' '${credential('__T__')}' | sed "s/__T__/$TOKEN/"\n`,
      { mode: 0o755 },
    );
    const auth = execAuth(cfg, { clock: systemClock });
    const [a, b] = await Promise.all([auth(), auth()]);
    assert.deepEqual(a, { authorization: 'Bearer tok-1' });
    assert.deepEqual(b, a);
    assert.deepEqual(await auth(), a);
    assert.equal(readFileSync(runs, 'utf8'), 'run\n', 'one run for concurrent and later requests');
    const info = JSON.parse(readFileSync(join(dir, 'info'), 'utf8'));
    assert.deepEqual(info, { apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false } });
  });

  it('runs the plugin again once the token expired', async () => {
    const runs = join(dir, 'runs-exp');
    const cfg = plugin(
      'exp.sh',
      `echo run >> ${runs}\nprintf '%s' '${credential('old', '2000-01-01T00:00:00Z')}'`,
    );
    const auth = execAuth(cfg, { clock: systemClock });
    await auth();
    await auth();
    assert.equal(readFileSync(runs, 'utf8'), 'run\nrun\n');
  });

  it('kills a hanging plugin and what it forked at the deadline it was given', async () => {
    const pids = join(dir, 'hang.pids');
    const cfg = plugin('hang.sh', `sleep 600 &\necho $$ $! > ${pids}\nwait`);
    const started = Date.now();
    const err = await failure(execAuth(cfg, { clock: systemClock })(400));
    assert.equal(err.reason, 'timeout');
    assert.ok(Date.now() - started < 5000, 'gave up at the deadline');
    const [shell, sleeper] = readFileSync(pids, 'utf8').trim().split(' ').map(Number) as [number, number];
    const end = Date.now() + 5000;
    while ((alive(shell) || alive(sleeper)) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(sleeper), false, 'the forked child was killed too');
    assert.equal(alive(shell), false);
  });

  it('kills a plugin that prints more than the output cap', async () => {
    const cfg = plugin('flood.sh', 'exec yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx');
    const err = await failure(execAuth(cfg, { clock: systemClock })());
    assert.equal(err.reason, 'output_too_large');
    assert.match(err.message, new RegExp(`over ${EXEC_MAX_OUTPUT_BYTES} bytes`));
  });

  it('says why a plugin failed: exit status with stderr, bad output, missing command', async () => {
    const exit = await failure(
      execAuth(plugin('fail.sh', 'echo denied >&2\nexit 3'), { clock: systemClock })(),
    );
    assert.equal(exit.reason, 'exit');
    assert.match(exit.message, /exit status 3: denied/);
    const bad = await failure(execAuth(plugin('bad.sh', 'echo not json'), { clock: systemClock })());
    assert.equal(bad.reason, 'invalid');
    const wrong = plugin('wrong.sh', `printf '%s' '${credential('t').replace(V1, 'v9')}'`);
    assert.equal((await failure(execAuth(wrong, { clock: systemClock })())).reason, 'invalid');
    const missing = parseExecConfig({ apiVersion: V1, command: join(dir, 'nope') }, dir);
    assert.ok(!existsSync(missing.command));
    assert.equal((await failure(execAuth(missing, { clock: systemClock })())).reason, 'start');
    assert.throws(() => parseExecConfig({ apiVersion: V1 }, dir), /no command/);
  });
});
