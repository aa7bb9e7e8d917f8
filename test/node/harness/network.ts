/**
 * The node's pod network: a Linux bridge made by the harness before anything starts, which the CNI
 * bridge plugin then uses as it is. Its address is the "node IP" every component uses: kube-apiserver
 * listens there (pods reach it without kube-proxy, see node-cluster.ts), the kubelet registers it as
 * the Node's InternalIP (the kubelet refuses a loopback node IP), and pods get addresses from the same
 * /16. Nothing leaves the machine: the bridge has no uplink and masquerading is off.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { run } from '../../e2e/harness/processes.ts';

export const BRIDGE = 'npd0';
export const NODE_IP = '10.88.0.1';
const SUBNET = '10.88.0.0/16';
/** Service IPs: the first one (kubernetes.default) is NODE_IP itself. Pods get 10.88.1.0/24. */
export const SERVICE_RANGE = '10.88.0.0/24';

async function ip(args: string[], allowFail = false): Promise<void> {
  const r = await run('ip', args);
  if (r.code !== 0 && !allowFail) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

export async function createBridge(): Promise<void> {
  await ip(['link', 'del', BRIDGE], true);
  await ip(['link', 'add', BRIDGE, 'type', 'bridge']);
  await ip(['addr', 'add', `${NODE_IP}/16`, 'dev', BRIDGE]);
  await ip(['link', 'set', BRIDGE, 'up']);
}

export async function deleteBridge(): Promise<void> {
  await ip(['link', 'del', BRIDGE], true);
}

/** The CNI config containerd's CRI plugin loads: bridge + host-local + loopback from Debian's package. */
export function writeCniConfig(confDir: string, ipamDataDir: string): void {
  fs.mkdirSync(confDir, { recursive: true });
  const conflist = {
    cniVersion: '1.0.0',
    name: 'npd-node',
    plugins: [
      {
        type: 'bridge',
        bridge: BRIDGE,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDataDir,
          ranges: [[{ subnet: SUBNET, rangeStart: '10.88.1.2', rangeEnd: '10.88.1.254', gateway: NODE_IP }]],
          routes: [{ dst: '0.0.0.0/0' }],
        },
      },
      { type: 'loopback' },
    ],
  };
  fs.writeFileSync(path.join(confDir, '10-npd-node.conflist'), JSON.stringify(conflist, null, 2));
}
