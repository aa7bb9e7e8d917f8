import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import {
  type DnsLookup,
  type DnsQuery,
  resolvConfServers,
  resolveWithServers,
} from '../../../../src/host/protocols/dns.ts';
import { validateProbeMonitor } from '../../../../src/monitors/probe/schema.ts';
import { serveDns } from '../../../support/fake-dns.ts';
import { fakeHost, probe, runOne, T0 } from './helpers.ts';

const RESOLV =
  'search example.internal\n# comment\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\noptions ndots:5\n';

describe('dns probe', () => {
  it('asks the resolv.conf name servers for the configured name', async () => {
    const host = await fakeHost({ 'etc/resolv.conf': RESOLV });
    const asked: DnsQuery[] = [];
    const lookup: DnsLookup = async (q) => {
      asked.push(q);
      return ['192.0.2.10'];
    };
    const r = await runOne(
      probe({ kind: 'dns', hostname: 'registry.example' }, { paths: host, clock: new FakeClock(T0), lookup }),
    );
    assert.equal(r.status, 'OK');
    assert.equal(r.message, 'registry.example A via 10.0.0.2, fe80::1: 192.0.2.10');
    assert.equal(r.rule.condition, 'DNSResolutionFailed');
    assert.deepEqual(asked, [
      { servers: ['10.0.0.2', 'fe80::1'], name: 'registry.example', rrtype: 'A', timeoutMs: 2000 },
    ]);
  });

  it('is NonOK naming the error, and falls back to 127.0.0.1 like glibc', async () => {
    const host = await fakeHost({ 'etc/resolv.conf': 'search x\n' });
    const lookup: DnsLookup = async () => {
      throw Object.assign(new Error('queryA ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const r = await runOne(
      probe({ kind: 'dns', hostname: 'nope.example' }, { paths: host, clock: new FakeClock(T0), lookup }),
    );
    assert.equal(r.status, 'NonOK');
    assert.equal(r.rule.reason, 'DNSLookupFailed');
    assert.match(
      r.message,
      /^nope\.example A via 127\.0\.0\.1: ENOTFOUND; check the name servers in \/etc\/resolv\.conf/,
    );
  });

  it('is NonOK when the resolver does not answer within requestTimeout (fake clock)', async () => {
    const host = await fakeHost({ 'etc/resolv.conf': RESOLV });
    const clock = new FakeClock(T0);
    let asked: () => void = () => {};
    const called = new Promise<void>((r) => {
      asked = r;
    });
    const lookup: DnsLookup = (_q, signal) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        asked();
      });
    const pending = runOne(
      probe({ kind: 'dns', hostname: 'slow.example', requestTimeout: '1s' }, { paths: host, clock, lookup }),
    );
    await called;
    clock.advance(999);
    await new Promise((r) => setImmediate(r));
    clock.advance(1);
    const r = await pending;
    assert.equal(r.status, 'NonOK');
    assert.match(r.message, /no answer within 1s/);
  });

  it('throws (Unknown) when resolv.conf is unreadable', async () => {
    const host = await fakeHost({});
    await assert.rejects(
      runOne(probe({ kind: 'dns', hostname: 'a.example' }, { paths: host, clock: new FakeClock(T0) })),
      /ENOENT/,
    );
  });
});

describe('node:dns lookup against a local responder', () => {
  it('resolves a known name, fails an unknown one, and keeps three servers at most', async () => {
    const dns = await serveDns({ 'api.test': ['192.0.2.7'], 'v6.test': ['2001:db8::5'] });
    after(() => dns.close());
    const q = { servers: [`127.0.0.1:${dns.port}`], rrtype: 'A' as const, timeoutMs: 1000 };
    const signal = new AbortController().signal;
    assert.deepEqual(await resolveWithServers({ ...q, name: 'api.test' }, signal), ['192.0.2.7']);
    assert.deepEqual(await resolveWithServers({ ...q, name: 'v6.test', rrtype: 'AAAA' }, signal), [
      '2001:db8::5',
    ]);
    await assert.rejects(resolveWithServers({ ...q, name: 'missing.test' }, signal), { code: 'ENOTFOUND' });
    assert.deepEqual(resolvConfServers('nameserver a\nnameserver b\nnameserver c\nnameserver d\n'), [
      'a',
      'b',
      'c',
    ]);
  });
});

describe('apiserver probe', () => {
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('connects to the endpoint from KUBERNETES_SERVICE_HOST/PORT', async () => {
    const host = await fakeHost({});
    const environment = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port) };
    const r = await runOne(
      probe({ kind: 'apiserver' }, { paths: host, clock: new FakeClock(T0), environment }),
    );
    assert.equal(r.status, 'OK');
    assert.equal(r.message, `connected to the API server at 127.0.0.1:${port}`);
    assert.equal(r.rule.condition, 'APIServerUnreachable');
  });

  it('is NonOK when nothing listens, and Unknown without an endpoint', async () => {
    const host = await fakeHost({});
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const free = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = { paths: host, clock: new FakeClock(T0), environment: {} };
    const r = await runOne(probe({ kind: 'apiserver', host: '127.0.0.1', port: free }, e));
    assert.equal(r.status, 'NonOK');
    assert.match(
      r.message,
      new RegExp(`^cannot connect to the API server at 127\\.0\\.0\\.1:${free}: ECONNREFUSED; check`),
    );
    const u = await runOne(probe({ kind: 'apiserver' }, e));
    assert.equal(u.status, 'Unknown');
    assert.match(u.message, /KUBERNETES_SERVICE_HOST/);
  });

  it('is NonOK when the connect outlasts requestTimeout (fake clock)', async () => {
    const host = await fakeHost({});
    const clock = new FakeClock(T0);
    const check = probe(
      { kind: 'apiserver', host: '127.0.0.1', port, requestTimeout: '2s' },
      { paths: host, clock },
    );
    const pending = runOne(check);
    // A TCP connect never completes synchronously: the deadline fires first.
    clock.advance(2000);
    const r = await pending;
    assert.equal(r.status, 'NonOK');
    assert.match(r.message, /no answer within 2s/);
  });
});

describe('network probe schema', () => {
  const issues = (probes: unknown[]) =>
    validateProbeMonitor({ plugin: 'probe', probes }, 'net.yaml').issues.map((i) => `${i.file}: ${i.path}`);

  it('names file and field of every bad option', () => {
    assert.deepEqual(
      issues([
        { kind: 'interfaces', interfaces: ['eth/0'], flapping: { changes: 0 } },
        { kind: 'default-route', ipv4: false },
        { kind: 'sysctl', values: { 'net/x/../y': 1, 'net.ipv4.ip_forward': 1, 'a b': 1 } },
        { kind: 'nic-counters', counters: ['../x'], increase: -1 },
        { kind: 'dns' },
        { kind: 'dns', hostname: 'a b' },
        { kind: 'dns', hostname: 'a.example', requestTimeout: '9s' },
        { kind: 'apiserver', port: 70000 },
      ]),
      [
        'net.yaml: probes[0].interfaces[0]',
        'net.yaml: probes[0].flapping.changes',
        'net.yaml: probes[1].ipv4',
        'net.yaml: probes[2].values.net/x/../y',
        'net.yaml: probes[2].values.a b',
        'net.yaml: probes[3].counters[0]',
        'net.yaml: probes[3].increase',
        'net.yaml: probes[4].hostname',
        'net.yaml: probes[5].hostname',
        'net.yaml: probes[6].requestTimeout',
        'net.yaml: probes[7].port',
      ],
    );
  });

  it('declares the flapping condition with the interfaces probe', () => {
    const { config } = validateProbeMonitor(
      { plugin: 'probe', probes: [{ kind: 'interfaces' }] },
      'net.yaml',
    );
    assert.deepEqual(
      config?.conditions.map((c) => [c.type, c.reason]),
      [
        ['NetworkInterfaceFlapping', 'NoInterfaceFlapping'],
        ['NetworkInterfaceDown', 'InterfacesUp'],
      ],
    );
  });
});
