/** Proof 1, second run: `helm install` of the chart with the image set, as docs/install.md says. */
import * as path from 'node:path';
import { run } from '../e2e/harness/processes.ts';
import { REPO as SUPPORT_REPO } from '../support/agent-process.ts';
import type { NodeCluster } from './harness/node-cluster.ts';
import { imageOverride, NS } from './support.ts';

export const CHART = path.join(SUPPORT_REPO, 'deploy/helm/node-problem-detector');

/** helm from test/tools/go-tools.sh (HELM=<path> on its stdout). */
export async function helmBinary(): Promise<string> {
  const r = await run('bash', [path.join(SUPPORT_REPO, 'test/tools/go-tools.sh')], {
    timeoutMs: 60 * 60_000,
  });
  const m = /^HELM=(.+)$/m.exec(r.stdout);
  if (r.code !== 0 || !m?.[1]) throw new Error(`go-tools.sh failed (${r.code}):\n${r.stderr.slice(-3000)}`);
  return m[1];
}

export async function helmInstall(node: NodeCluster, helm: string): Promise<string> {
  const img = imageOverride(node.agentImage);
  return helmRun(node, helm, [
    'install',
    'node-problem-detector',
    CHART,
    '--set',
    `image.repository=${img.newName}`,
    '--set',
    `image.tag=${img.newTag}`,
  ]);
}

/** `helm upgrade --reuse-values` of the installed release with more values, as a user flips a switch. */
export async function helmUpgrade(node: NodeCluster, helm: string, values: string[]): Promise<string> {
  return helmRun(node, helm, ['upgrade', 'node-problem-detector', CHART, '--reuse-values', ...values]);
}

async function helmRun(node: NodeCluster, helm: string, command: string[]): Promise<string> {
  const args = [
    ...command,
    '--namespace',
    NS,
    '--kubeconfig',
    node.cp.adminKubeconfig,
    '--wait',
    '--timeout',
    '4m',
  ];
  const r = await run(helm, args, {
    timeoutMs: 300_000,
    env: { ...process.env, HOME: path.join(node.workDir, 'helm-home') },
  });
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
  return r.stdout;
}
