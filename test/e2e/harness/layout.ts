/**
 * The work folder of one control plane (ports, paths, keys, audit policy) and the etcd and
 * kube-apiserver command lines derived from it. Kept apart from process handling so the fixed
 * configuration can be read in one place.
 */
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { auditPolicyYaml } from './audit.ts';
import { freePorts } from './processes.ts';
import type { ControlPlaneBinaries, ControlPlaneOptions } from './types.ts';

export interface Layout {
  workDir: string;
  certDir: string;
  port: number;
  etcdPeerPort: number;
  /** https://127.0.0.1:<port> */
  url: string;
  etcdUrl: string;
  caFile: string;
  auditLogPath: string;
  apiserverLog: string;
  etcdLog: string;
  tokenFile: string;
  auditPolicyFile: string;
  saPub: string;
  saKey: string;
  nodeCluster: ControlPlaneOptions['nodeCluster'];
}

/** Creates the work folder with its audit policy and service-account keys; picks free ports. */
export async function prepareLayout(nodeCluster?: ControlPlaneOptions['nodeCluster']): Promise<Layout> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'npd-e2e-cp-'));
  const certDir = path.join(workDir, 'certs');
  fs.mkdirSync(certDir);
  const [etcdPort, etcdPeerPort, freeApiPort] = (await freePorts(3)) as [number, number, number];
  const port = nodeCluster?.port ?? freeApiPort;
  const layout: Layout = {
    workDir,
    certDir,
    port,
    etcdPeerPort,
    url: `https://${nodeCluster?.address ?? '127.0.0.1'}:${port}`,
    etcdUrl: `http://127.0.0.1:${etcdPort}`,
    caFile: path.join(certDir, 'apiserver.crt'),
    auditLogPath: path.join(workDir, 'audit.log'),
    apiserverLog: path.join(workDir, 'kube-apiserver.log'),
    etcdLog: path.join(workDir, 'etcd.log'),
    tokenFile: path.join(workDir, 'tokens.csv'),
    auditPolicyFile: path.join(workDir, 'audit-policy.yaml'),
    saPub: path.join(workDir, 'sa.pub'),
    saKey: path.join(workDir, 'sa.key'),
    nodeCluster,
  };
  fs.writeFileSync(layout.auditPolicyFile, auditPolicyYaml());
  writeServiceAccountKeys(layout.saPub, layout.saKey);
  return layout;
}

// kube-apiserver requires service-account issuer and signing-key flags; test/node's pods get tokens signed so.
function writeServiceAccountKeys(saPub: string, saKey: string): void {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  fs.writeFileSync(saPub, publicKey);
  fs.writeFileSync(saKey, privateKey, { mode: 0o600 });
}

export function apiserverArgv(layout: Layout, binaries: ControlPlaneBinaries, extra: string[]): string[] {
  const { url, certDir, nodeCluster } = layout;
  const address = nodeCluster?.address ?? '127.0.0.1';
  return [
    binaries.kubeApiserver,
    `--etcd-servers=${layout.etcdUrl}`,
    `--secure-port=${layout.port}`,
    `--bind-address=${address}`,
    `--advertise-address=${address}`,
    `--cert-dir=${certDir}`,
    `--service-cluster-ip-range=${nodeCluster?.serviceClusterIpRange ?? '10.0.0.0/24'}`,
    '--allow-privileged=true',
    ...(nodeCluster
      ? [
          '--authorization-mode=Node,RBAC',
          '--enable-admission-plugins=NodeRestriction',
          // The Node's hostname does not resolve here; its InternalIP is the kubelet's address.
          '--kubelet-preferred-address-types=InternalIP',
        ]
      : ['--disable-admission-plugins=ServiceAccount', '--authorization-mode=RBAC']),
    `--service-account-issuer=${url}/`,
    `--service-account-key-file=${layout.saPub}`,
    `--service-account-signing-key-file=${layout.saKey}`,
    `--token-auth-file=${layout.tokenFile}`,
    `--audit-policy-file=${layout.auditPolicyFile}`,
    `--audit-log-path=${layout.auditLogPath}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxbackup=0',
    '--audit-log-maxsize=1024', // MB; 0 would mean lumberjack's 100 MB, and a rotation breaks AuditMarks
    // A loopback advertise address is not a valid Endpoints IP: don't reconcile the kubernetes Service.
    '--endpoint-reconciler-type=none',
    ...extra,
  ];
}

export function etcdArgv(layout: Layout, binaries: ControlPlaneBinaries): string[] {
  const { etcdUrl, etcdPeerPort } = layout;
  return [
    binaries.etcd,
    '--name=npd-e2e',
    `--data-dir=${path.join(layout.workDir, 'etcd-data')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
    `--initial-cluster=npd-e2e=http://127.0.0.1:${etcdPeerPort}`,
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}
