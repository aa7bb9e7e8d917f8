import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import type { Condition, Status } from '../../src/core/types.ts';

/**
 * The network probes against real kernel state: a network namespace this test creates, with a veth
 * pair, a default route, a DNS responder and a TCP listener inside it. Links are brought down,
 * routes deleted and sysctls flipped there, and the probes run in that namespace through
 * `ip netns exec`. Nothing leaves the machine: every address is inside the namespace.
 */

const REPO = join(import.meta.dirname, '../..');
const NS = `npdt${randomBytes(3).toString('hex')}`;
const A = 'va'; // the interface the probes watch
const B = 'vb'; // its peer: bringing it down takes A's carrier away
const ADDR = '10.200.0.2';
const GATEWAY = '10.200.0.254';
const NAME = 'api.netns.test';

function canCreateNetns(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root for ip netns';
  try {
    execFileSync('ip', ['netns', 'add', NS], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `ip netns add failed: ${String(err).split('\n')[0]}`;
  }
}

const skip = canCreateNetns();
const ip = (...args: string[]) => execFileSync('ip', ['-n', NS, ...args], { stdio: 'pipe' });
const inNs = (...cmd: string[]) => execFileSync('ip', ['netns', 'exec', NS, ...cmd], { stdio: 'pipe' });
const setForward = (v: number) => inNs('sh', '-c', `echo ${v} > /proc/sys/net/ipv4/ip_forward`);

function nodeInNs(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn('ip', ['netns', 'exec', NS, process.execPath, '--import', 'tsx', ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

const CONFIG = `plugin: probe
source: network-probe
interval: 250ms
timeout: 2s
probes:
  - kind: interfaces
    interfaces: [${A}]
    flapping: { changes: 4, window: 1m }
  - kind: default-route
  - kind: sysctl
    values: { net.ipv4.ip_forward: 1 }
  - kind: nic-counters
    interfaces: [${A}]
    counters: [tx_dropped]
    increase: 3
    window: 1m
  - kind: dns
    hostname: ${NAME}
    requestTimeout: 1s
  - kind: apiserver
    requestTimeout: 1s
`;

describe('network probes in a network namespace', { skip }, () => {
  const children: ChildProcess[] = [];
  let dir = '';
  let latest: Status | undefined;
  let stderr = '';
  let served = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'npd-netns-'));
    ip('link', 'set', 'lo', 'up');
    ip('link', 'add', A, 'type', 'veth', 'peer', 'name', B);
    ip('addr', 'add', '10.200.0.1/24', 'dev', A);
    ip('addr', 'add', `${ADDR}/24`, 'dev', B);
    ip('link', 'set', A, 'up');
    ip('link', 'set', B, 'up');
    ip('route', 'add', 'default', 'via', GATEWAY, 'dev', A);
    // A static neighbour, so datagrams to it reach the veth driver, which drops them while B is down.
    ip('neigh', 'add', '10.200.0.3', 'lladdr', '02:00:00:00:00:03', 'dev', A, 'nud', 'permanent');
    setForward(1);
    // --host-root: the namespace's own /proc and /sys (ip netns exec remounts /sys), a resolv.conf.
    mkdirSync(join(dir, 'root/etc'), { recursive: true });
    symlinkSync('/proc', join(dir, 'root/proc'));
    symlinkSync('/sys', join(dir, 'root/sys'));
    writeFileSync(join(dir, 'root/etc/resolv.conf'), `nameserver ${ADDR}\n`);
    writeFileSync(join(dir, 'probes.yaml'), CONFIG);
    const services = nodeInNs(['test/integration/netns/services.ts', ADDR, '6443', NAME, '10.200.0.77']);
    children.push(services);
    services.stdout?.on('data', (d) => {
      served += String(d);
    });
    await new Promise<void>((resolve, reject) => {
      services.stdout?.once('data', () => resolve());
      services.once('exit', (code) => reject(new Error(`services exited ${code}`)));
    });
    const runner = nodeInNs(
      ['test/integration/netns/run-probes.ts', join(dir, 'probes.yaml'), join(dir, 'root')],
      {
        KUBERNETES_SERVICE_HOST: ADDR,
        KUBERNETES_SERVICE_PORT: '6443',
      },
    );
    children.push(runner);
    runner.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    createInterface({ input: runner.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      latest = JSON.parse(line) as Status;
    });
  });

  after(() => {
    for (const c of children) {
      c.stdin?.end();
      c.kill('SIGKILL');
    }
    try {
      execFileSync('ip', ['netns', 'del', NS], { stdio: 'pipe' });
    } catch {
      // already gone
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const condition = (type: string): Condition | undefined => latest?.conditions.find((c) => c.type === type);

  /** Waits until `type` has `status`; real probes every 250 ms, so this is bounded by the deadline. */
  async function until(type: string, status: 'True' | 'False', ms = 20_000): Promise<Condition> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const c = condition(type);
      if (c?.status === status) return c;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`${type} did not become ${status}: ${JSON.stringify(condition(type))}\n${stderr}`);
  }

  async function servedLine(re: RegExp, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (!re.test(served) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.match(served, re);
  }

  it('reports a healthy namespace as healthy', async () => {
    for (const type of [
      'NetworkInterfaceDown',
      'NetworkInterfaceFlapping',
      'NoDefaultRoute',
      'NetworkSysctlMisconfigured',
      'NetworkInterfacePacketLoss',
      'DNSResolutionFailed',
      'APIServerUnreachable',
    ])
      await until(type, 'False');
    assert.equal(latest?.conditions.length, 7);
    // The verdicts came from the namespace's own resolver and listener. The servers log after they
    // answer, so their lines can reach this process after the verdict does: wait for them.
    await servedLine(new RegExp(`^query ${NAME.replace(/\./g, '\\.')}$`, 'm'));
    await servedLine(/^connection$/m);
    assert.equal(condition('APIServerUnreachable')?.reason, 'APIServerReachable');
  });

  it('sees a link go down, drops while it is down, and the link come back', async () => {
    ip('link', 'set', B, 'down');
    const down = await until('NetworkInterfaceDown', 'True');
    assert.equal(down.reason, 'InterfaceDown');
    assert.match(down.message, new RegExp(`^${A} is lowerlayerdown`));
    const send = `const s=require('node:dgram').createSocket('udp4');let n=0;const f=()=>s.send('x',9,'10.200.0.3',()=>{if(++n<8)f();else s.close()});f()`;
    inNs(process.execPath, '-e', send);
    const loss = await until('NetworkInterfacePacketLoss', 'True');
    assert.match(loss.message, new RegExp(`^${A} tx_dropped \\+\\d+ in 1m0s \\(limit 3\\)`));
    ip('link', 'set', B, 'up');
    await until('NetworkInterfaceDown', 'False');
  });

  it('calls a link that keeps losing its carrier flapping', async () => {
    // Four carrier changes here reach the limit of four within the window by themselves: the earlier
    // test's two can fall out of the 1 m window on a loaded machine.
    for (let i = 0; i < 2; i++) {
      ip('link', 'set', B, 'down');
      ip('link', 'set', B, 'up');
    }
    const flap = await until('NetworkInterfaceFlapping', 'True');
    assert.match(flap.message, new RegExp(`^${A} changed carrier [4-9] times in 1m0s`));
  });

  it('sees the default route deleted and restored', async () => {
    ip('route', 'del', 'default');
    const missing = await until('NoDefaultRoute', 'True');
    assert.match(missing.message, /^no IPv4 default route/);
    ip('route', 'add', 'default', 'via', GATEWAY, 'dev', A);
    const back = await until('NoDefaultRoute', 'False');
    assert.equal(back.reason, 'DefaultRoutePresent');
  });

  it('sees net.ipv4.ip_forward flipped in the namespace', async () => {
    setForward(0);
    const bad = await until('NetworkSysctlMisconfigured', 'True');
    assert.match(bad.message, /^net\.ipv4\.ip_forward is 0, expected 1/);
    setForward(1);
    await until('NetworkSysctlMisconfigured', 'False');
  });

  it('sees DNS and the API server endpoint fail when their servers stop', async () => {
    const services = children[0];
    services?.kill('SIGKILL');
    const dns = await until('DNSResolutionFailed', 'True');
    assert.match(dns.message, new RegExp(`^${NAME.replace(/\./g, '\\.')} A via ${ADDR}: `));
    const api = await until('APIServerUnreachable', 'True');
    assert.match(api.message, new RegExp(`^cannot connect to the API server at ${ADDR}:6443: ECONNREFUSED`));
  });
});
