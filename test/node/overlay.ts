/**
 * The second install of the node suite: deploy/base with the node-probes and taint components, the
 * flags those need, and a projected ServiceAccount token of the shortest lifetime kube-apiserver allows
 * (600 s, so the kubelet rotates it after 480 s), at the path in-cluster clients read.
 *
 * This machine has no systemd (PID 1 is not), and its kubelet and containerd are no systemd units, so
 * the systemd probes of rules/probes-node.yaml can only answer Unknown, which would hold both
 * conditions at Unknown. The overlay runs that file with its `kind: systemd` probes removed, everything
 * else as shipped (the CRI probe, the kubelet /healthz probe, NTP).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { PROBE_ARGS } from './probes.ts';
import { REPO } from './support.ts';

export const TOKEN_SECONDS = 600;
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export const NO_SYSTEMD_FILE = 'probes-node-without-systemd.yaml';
const COMPONENT_ARG = '--config.probe-monitor=/config/probes-node.yaml';

/** rules/probes-node.yaml without its systemd probes, into the overlay folder; returns the file name. */
export function writeProbesWithoutSystemd(dir: string): string {
  const doc = parse(fs.readFileSync(path.join(REPO, 'rules/probes-node.yaml'), 'utf8')) as {
    probes: { kind: string }[];
  };
  doc.probes = doc.probes.filter((p) => p.kind !== 'systemd');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, NO_SYSTEMD_FILE), stringify(doc));
  return NO_SYSTEMD_FILE;
}

/** The base's argument count: the node-probes component, listed first, appends its file right after. */
function baseArgCount(): number {
  const ds = parse(fs.readFileSync(path.join(REPO, 'deploy/base/daemonset.yaml'), 'utf8')) as {
    spec: { template: { spec: { containers: { args: string[] }[] } } };
  };
  return ds.spec.template.spec.containers[0]?.args.length ?? 0;
}

export function probesOverlayPatch(): unknown[] {
  const add = (p: string, value: unknown) => ({ op: 'add', path: p, value });
  // The test op fails the apply if the component's argument is not there.
  const arg = `/spec/template/spec/containers/0/args/${baseArgCount()}`;
  return [
    { op: 'test', path: arg, value: COMPONENT_ARG },
    { op: 'replace', path: arg, value: `--config.probe-monitor=/config/${NO_SYSTEMD_FILE}` },
    ...PROBE_ARGS.map((a) => add('/spec/template/spec/containers/0/args/-', a)),
    { op: 'replace', path: '/spec/template/spec/automountServiceAccountToken', value: false },
    add('/spec/template/spec/volumes/-', {
      name: 'short-token',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: TOKEN_SECONDS } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    }),
    add('/spec/template/spec/containers/0/volumeMounts/-', {
      name: 'short-token',
      mountPath: SA_DIR,
      readOnly: true,
    }),
  ];
}
