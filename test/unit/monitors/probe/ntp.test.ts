import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import {
  type AdjtimexFn,
  decodeTimex,
  koffiAdjtimex,
  STA_UNSYNC,
} from '../../../../src/host/clib/adjtimex.ts';
import { readNtpTime, writeNtpTime } from '../../../../src/host/protocols/sntp.ts';
import { createNtpCheck, type NtpOptions } from '../../../../src/monitors/probe/ntp.ts';
import { env, fakeHost, runOne, spec, T0 } from './helpers.ts';

const synced: AdjtimexFn = async () => ({ state: 0, status: 0x2001, maxErrorUs: 250_000, estErrorUs: 1_000 });
const unsynced: AdjtimexFn = async () => ({
  state: 5,
  status: STA_UNSYNC,
  maxErrorUs: 16_000_000,
  estErrorUs: 16_000_000,
});
const unavailable: AdjtimexFn = async () => ({ unavailable: 'cannot load adjtimex through koffi: test' });

function ntp(
  entry: Record<string, unknown>,
  adjtimex: AdjtimexFn,
  e = env({ root: '/nonexistent', proc: '', initMountinfo: '', sys: '', dev: '' }),
) {
  return createNtpCheck(spec<NtpOptions>({ kind: 'ntp', ...entry }), e, adjtimex);
}

describe('ntp probe: kernel state', () => {
  it('reads STA_UNSYNC and maxerror', async () => {
    const ok = await runOne(ntp({}, synced));
    assert.equal(ok.status, 'OK');
    assert.equal(ok.message, 'kernel clock is synchronised (maxerror 250ms, esterror 1ms)');
    assert.equal(ok.rule.condition, 'NTPProblem');
    const bad = await runOne(ntp({}, unsynced));
    assert.equal(bad.status, 'NonOK');
    assert.equal(bad.rule.reason, 'NTPIsDown');
    assert.match(bad.message, /STA_UNSYNC/);
    const drifting = await runOne(ntp({ maxError: '100ms' }, synced));
    assert.equal(drifting.status, 'NonOK');
  });

  it('decodes struct timex at the LP64 offsets', () => {
    const buf = Buffer.alloc(208);
    buf.writeBigInt64LE(16_000_000n, 24);
    buf.writeBigInt64LE(500n, 32);
    buf.writeInt32LE(STA_UNSYNC, 40);
    assert.deepEqual(decodeTimex(5, buf), {
      state: 5,
      status: STA_UNSYNC,
      maxErrorUs: 16_000_000,
      estErrorUs: 500,
    });
  });

  it('calls the real adjtimex through koffi on this machine', async () => {
    const t = await koffiAdjtimex()();
    if ('unavailable' in t) assert.match(t.unavailable, /adjtimex/);
    else {
      assert.ok(t.state >= 0 && t.state <= 5, `state ${t.state}`);
      assert.ok(t.maxErrorUs >= 0);
    }
  });
});

describe('ntp probe: state-file fallback', () => {
  it('uses the timesyncd flag file when adjtimex is unavailable', async () => {
    const host = await fakeHost({ 'run/systemd/timesync/synchronized': '' });
    const ok = await runOne(ntp({}, unavailable, env(host)));
    assert.equal(ok.status, 'OK');
    assert.match(ok.message, /^\/run\/systemd\/timesync\/synchronized exists/);
    const waiting = await fakeHost({ 'run/systemd/timesync/.keep': '' });
    const bad = await runOne(ntp({}, unavailable, env(waiting)));
    assert.equal(bad.status, 'NonOK');
    assert.match(bad.message, /is missing/);
    const none = await runOne(ntp({}, unavailable, env(await fakeHost({}))));
    assert.equal(none.status, 'Unknown');
    assert.match(none.message, /cannot tell .*koffi: test/);
  });

  it('skips adjtimex when disabled', async () => {
    const host = await fakeHost({ 'var/lib/chrony/synced': '' });
    const r = await runOne(
      ntp({ adjtimex: false, fallbackFiles: ['/var/lib/chrony/synced'] }, unsynced, env(host)),
    );
    assert.equal(r.status, 'OK');
    assert.match(r.message, /adjtimex disabled/);
  });
});

describe('ntp probe: SNTP offset against a fake server', async () => {
  let skewMs = 0;
  let silent = false;
  const server = createSocket('udp4');
  server.on('message', (msg, rinfo) => {
    if (silent) return;
    const t1 = readNtpTime(msg, 40);
    const reply = Buffer.alloc(48);
    reply[0] = (0 << 6) | (4 << 3) | 4;
    reply[1] = 2;
    msg.copy(reply, 24, 40, 48);
    writeNtpTime(reply, 32, t1 + skewMs + 5);
    writeNtpTime(reply, 40, t1 + skewMs + 5);
    server.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  after(() => server.close());
  const clock = new FakeClock(T0);
  const e = env(await fakeHost({}), clock);
  const entry = { sntp: { server: '127.0.0.1', port, maxOffset: '500ms' } };

  it('computes the offset and compares it with maxOffset', async () => {
    skewMs = 200;
    const ok = await runOne(ntp(entry, synced, e));
    assert.equal(ok.status, 'OK');
    assert.match(ok.message, /clock offset 205ms from 127.0.0.1 \(stratum 2\)$/);
    skewMs = -2000;
    const bad = await runOne(ntp(entry, synced, e));
    assert.equal(bad.status, 'NonOK');
    assert.match(bad.message, /clock offset -1.995s from 127.0.0.1 \(stratum 2\) exceeds 500ms/);
  });

  it('is Unknown when the server does not answer in time', async () => {
    silent = true;
    try {
      const pending = runOne(ntp(entry, synced, e));
      await new Promise((r) => setTimeout(r, 20));
      clock.advance(2000);
      const r = await pending;
      assert.equal(r.status, 'Unknown');
      assert.match(r.message, /SNTP 127.0.0.1: no answer within 2s/);
    } finally {
      silent = false;
    }
  });
});
