// The agent's pod against the e2e control plane, as kubelet would set it up: deploy/base's
// ServiceAccount, ClusterRole and binding applied, a real ServiceAccount token (TokenRequest) projected
// where kubelet puts it, and the image started with the rendered DaemonSet's flags. Shared by the
// container test and the container bench.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { agentContainer, type Doc, type Obj, one, renderBase } from '../deploy/support.ts';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { freePort } from '../support/agent-process.ts';
import { containerArgs, type PodContext, podmanRunFlags } from './pod-flags.ts';
import { type Container, runContainer, waitForListener } from './podman.ts';

const toYaml = (docs: readonly Doc[]): string => docs.map((d) => stringify(d)).join('---\n');

/** Applies deploy/base's RBAC and returns a folder (under `work`) with token, namespace and ca.crt. */
export async function serviceAccountDir(cp: ControlPlane, home: string, work: string): Promise<string> {
  const rbac = renderBase().filter((d) =>
    ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(d.kind),
  );
  assert.equal(rbac.length, 3);
  await cp.kubectl(['apply', '-f', '-'], { home, input: toYaml(rbac) });
  const token = await cp.kubectl(['create', 'token', 'node-problem-detector', '-n', 'kube-system'], { home });
  const dir = join(work, 'serviceaccount');
  mkdirSync(dir);
  writeFileSync(join(dir, 'token'), token.trim());
  writeFileSync(join(dir, 'namespace'), 'kube-system');
  copyFileSync(cp.caFile, join(dir, 'ca.crt'));
  return dir;
}

export interface Pod {
  readonly c: Container;
  /** http://127.0.0.1:<status port> */
  readonly status: string;
  readonly metrics: string;
}

export interface PodOptions {
  /** Replaces the manifest's securityContext (the negative control). */
  readonly securityContext?: Obj;
  /** More `podman run` flags, e.g. resource limits. */
  readonly flags?: readonly string[];
  /** Keep the container after it exits (no --rm), so `podman inspect` can still read its state. */
  readonly keep?: boolean;
}

/** Starts the DaemonSet's agent container without waiting for it (see startPod). */
export async function launchPod(
  cp: ControlPlane,
  saDir: string,
  work: string,
  docs: readonly Doc[],
  opts: PodOptions = {},
): Promise<Pod> {
  const ctx: PodContext = {
    nodeName: cp.nodeName,
    serviceAccountDir: saDir,
    apiserverPort: cp.port,
    workDir: mkdtempSync(join(work, 'pod-')),
    statusPort: await freePort(),
    metricsPort: await freePort(),
  };
  const c = runContainer(
    [...podmanRunFlags(docs, ctx, opts.securityContext), ...(opts.flags ?? [])],
    containerArgs(agentContainer(one([...docs], 'DaemonSet')), ctx),
    { rm: !opts.keep },
  );
  return {
    c,
    status: `http://127.0.0.1:${ctx.statusPort}`,
    metrics: `http://127.0.0.1:${ctx.metricsPort}/metrics`,
  };
}

/** Starts the DaemonSet's agent container and waits until its status server answers. */
export async function startPod(
  cp: ControlPlane,
  saDir: string,
  work: string,
  docs: readonly Doc[],
  opts: PodOptions = {},
): Promise<Pod> {
  const pod = await launchPod(cp, saDir, work, docs, opts);
  try {
    await waitForListener(pod.c, `${pod.status}/healthz`);
  } catch (err) {
    pod.c.remove();
    throw err;
  }
  return pod;
}
