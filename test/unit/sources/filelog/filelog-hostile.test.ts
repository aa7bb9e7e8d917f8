// A hostile log directory: whoever owns the directory of a followed log can swap the log for a symlink
// or plant a hard link to a root-only file there, and logPath or a directory symlink can point outside
// --host-root. None of these is read; each shows as a counted open error with health saying why. The
// agent's own warnings never quote log text.
import assert from 'node:assert/strict';
import { chownSync, lchownSync, linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import pino from 'pino';
import { FakeClock } from '../../../../src/core/clock.ts';
import type { LogLine } from '../../../../src/core/types.ts';
import { createFilelogSource } from '../../../../src/sources/filelog/source.ts';
import { HOUR, logConfig, makeDeps, metric, tempDir } from '../harness.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const ISO = { timestamp: '^(\\S+) ', message: '^\\S+ (.*)$', timestampFormat: '2006-01-02T15:04:05Z07:00' };
const SECRET = `${new Date(T0 + 1000).toISOString().replace('.000', '')} root:SECRET-HASH:19000:0:99999:7:::\n`;
const OTHER_UID = 4242;

function setup(t: TestContext, logPath = '/var/log/app/test.log') {
  const root = tempDir(t);
  const path = join(root, logPath);
  mkdirSync(dirname(path), { recursive: true });
  const logged: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logged.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const clock = new FakeClock(T0);
  const deps = { ...makeDeps(clock, root), logger: pino({ level: 'info' }, sink) };
  const config = logConfig({ plugin: 'filelog', logPath, pluginConfig: ISO, lookbackMs: HOUR });
  const lines: LogLine[] = [];
  const make = () => {
    const source = createFilelogSource(config, deps, {
      uptimeFs: { readFileSync: () => '1000000.00 1.00\n' },
      watch: null,
      pollIntervalMs: 250,
    });
    t.after(() => source.stop());
    source.start((batch) => lines.push(...batch));
    return source;
  };
  /** A root-only file outside the log directory, like /etc/shadow. */
  const secret = join(root, 'etc', 'shadow');
  mkdirSync(dirname(secret), { recursive: true });
  writeFileSync(secret, SECRET, { mode: 0o600 });
  return { root, path, clock, deps, lines, logged, make, secret };
}

const openErrors = (h: ReturnType<typeof setup>) =>
  metric(h.deps.registry, 'npd_log_file_events_total', { source: 'test-monitor', event: 'open_error' });

describe('filelog in a hostile directory', () => {
  it('does not follow a symlink put in place of the log', async (t) => {
    const h = setup(t);
    symlinkSync(h.secret, h.path);
    const source = h.make();
    h.clock.advance(250);
    assert.deepEqual(h.lines, []);
    assert.equal(source.health().healthy, false);
    assert.match(source.health().detail ?? '', /symbolic link/);
    assert.ok((await openErrors(h)) >= 1);
    assert.ok(!JSON.stringify(h.logged).includes('SECRET'), 'nothing of the target reaches the log');
  });

  it('refuses a file owned by someone else than the owner of its non-root directory (a planted hard link)', async (t) => {
    const h = setup(t);
    chownSync(dirname(h.path), OTHER_UID, OTHER_UID);
    linkSync(h.secret, h.path);
    const source = h.make();
    h.clock.advance(250);
    assert.deepEqual(h.lines, []);
    assert.match(source.health().detail ?? '', /owned by uid 0 .* uid 4242/);
    assert.ok((await openErrors(h)) >= 1);
  });

  it('reads a file its directory owner owns, and root-owned files in a root-owned directory', (t) => {
    const h = setup(t);
    writeFileSync(h.path, SECRET.replace('SECRET-HASH', 'own'));
    chownSync(dirname(h.path), OTHER_UID, OTHER_UID);
    chownSync(h.path, OTHER_UID, OTHER_UID);
    h.make();
    h.clock.advance(250);
    assert.equal(h.lines.length, 1);
    const r = setup(t, '/var/log/root.log');
    writeFileSync(r.path, SECRET.replace('SECRET-HASH', 'root'));
    r.make();
    r.clock.advance(250);
    assert.equal(r.lines.length, 1);
  });

  it('refuses a logPath that climbs out of the host root', (t) => {
    const h = setup(t);
    const deps = h.deps;
    const config = logConfig({
      plugin: 'filelog',
      logPath: '/var/log/../../../etc/shadow',
      pluginConfig: ISO,
    });
    assert.throws(() => createFilelogSource(config, deps), /logPath.*outside the host root/);
  });

  it('refuses a log whose directory is a symlink leading out of the host root', async (t) => {
    const outside = tempDir(t);
    writeFileSync(join(outside, 'test.log'), SECRET);
    const h = setup(t, '/var/log/linked/test.log');
    symlinkSync(outside, join(h.root, 'var', 'log', 'linked2'));
    // The followed directory itself is the link.
    const config = logConfig({ plugin: 'filelog', logPath: '/var/log/linked2/test.log', pluginConfig: ISO });
    const source = createFilelogSource(config, h.deps, { watch: null, pollIntervalMs: 250 });
    t.after(() => source.stop());
    const got: LogLine[] = [];
    source.start((b) => got.push(...b));
    h.clock.advance(250);
    assert.deepEqual(got, []);
    assert.match(source.health().detail ?? '', /outside the host root/);
  });

  it('does not follow a directory above the log swapped for a link into a root-only directory', async (t) => {
    const h = setup(t, '/var/log/app/sub/test.log');
    // The user owns /var/log/app, so can replace sub/ with a link; the target stays inside the host root.
    const privateDir = join(h.root, 'root', 'private');
    mkdirSync(privateDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(privateDir, 'test.log'), SECRET, { mode: 0o600 });
    chownSync(join(h.root, 'var', 'log', 'app'), OTHER_UID, OTHER_UID);
    const sub = dirname(h.path);
    rmSync(sub, { recursive: true });
    symlinkSync(privateDir, sub);
    lchownSync(sub, OTHER_UID, OTHER_UID);
    const source = h.make();
    h.clock.advance(250);
    assert.deepEqual(h.lines, []);
    assert.match(source.health().detail ?? '', /symbolic link owned by uid 4242/);
    assert.ok((await openErrors(h)) >= 1);
  });

  it('follows a directory link only root could have made (negative control)', (t) => {
    const h = setup(t, '/var/log/app/sub/test.log');
    const real = join(h.root, 'var', 'log', 'real');
    mkdirSync(real, { recursive: true });
    writeFileSync(join(real, 'test.log'), SECRET.replace('SECRET-HASH', 'fine'));
    const sub = dirname(h.path);
    rmSync(sub, { recursive: true });
    symlinkSync(real, sub);
    h.make();
    h.clock.advance(250);
    assert.equal(h.lines.length, 1, 'a root-owned link is followed');
  });

  it('never quotes an unparsable line in its warning: length and hash only', (t) => {
    const h = setup(t);
    writeFileSync(h.path, 'not a timestamp root:SECRET-HASH\n2026-99-99T00:00:00Z SECRET-TOO\n');
    h.make();
    h.clock.advance(250);
    const warnings = h.logged.filter((l) => l.msg === 'log lines do not match the timestamp/message config');
    assert.equal(warnings.length, 1);
    assert.ok(!JSON.stringify(h.logged).includes('SECRET'), JSON.stringify(warnings));
    assert.equal(warnings[0]?.lineBytes, 'not a timestamp root:SECRET-HASH'.length);
    assert.match(String(warnings[0]?.lineSha256), /^[0-9a-f]{16}$/);
  });
});
