/**
 * Throttling the agents with API Priority and Fairness: a test PriorityLevel with no seats of its own
 * (nothing lent or borrowed, 429 instead of queuing) and a FlowSchema that puts the agents' ServiceAccount
 * in it, ahead of where the shipped schemas put it (kube-system-service-accounts). APF still dispatches a
 * request when none of a level's is executing, so a hold user's requests, held by a slow webhook
 * (e2e/apf-hold.ts), keep the level busy and every agent request is rejected with Retry-After until
 * lift() deletes both schemas.
 */
import { holdWebhook } from '../e2e/apf-hold.ts';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { FLEET_NS, FLEET_SA, HOLD_USER, staticToken } from './identities.ts';
import { pollUntil } from './util.ts';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
export const THROTTLE_LEVEL = 'npd-fleet-throttle';
const HOLD_MS = 10_000;

function flowSchema(name: string, precedence: number, subject: unknown): unknown {
  return {
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name: THROTTLE_LEVEL },
      matchingPrecedence: precedence,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [subject],
          resourceRules: [
            { apiGroups: ['*'], resources: ['*'], verbs: ['*'], clusterScope: true, namespaces: ['*'] },
          ],
        },
      ],
    },
  };
}

async function create(cp: ControlPlane, path: string, body: unknown): Promise<void> {
  const r = await cp.request('POST', path, { body });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
}

/** No seats of its own, none lent or borrowed, and a 429 rather than a queue. */
const LEVEL = {
  metadata: { name: THROTTLE_LEVEL },
  spec: {
    type: 'Limited',
    limited: {
      nominalConcurrencyShares: 0,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      limitResponse: { type: 'Reject' },
    },
  },
};

export interface Throttle {
  /** Deletes the schemas (the agents' requests go back to the shipped ones) and stops the hold. */
  lift(): Promise<void>;
}

/** Puts the agents under the level; resolves once a request of theirs is rejected with 429. */
export async function throttleAgents(
  cp: ControlPlane,
  dir: string,
  probeToken: string,
  probeNode: string,
): Promise<Throttle> {
  await create(cp, `${FC}/prioritylevelconfigurations`, LEVEL);
  const sa = { kind: 'ServiceAccount', serviceAccount: { name: FLEET_SA, namespace: FLEET_NS } };
  await create(cp, `${FC}/flowschemas`, flowSchema('npd-fleet-agents', 840, sa));
  await create(
    cp,
    `${FC}/flowschemas`,
    flowSchema('npd-fleet-hold', 841, { kind: 'User', user: { name: HOLD_USER } }),
  );
  const hold = await holdWebhook(cp, dir, await staticToken(cp, HOLD_USER, 'cluster-admin'), HOLD_MS);
  hold.start(2);
  const probe = async () =>
    (await cp.request('GET', `/api/v1/nodes/${probeNode}`, { token: probeToken })).status === 429;
  if (!(await pollUntil(probe, 60_000, 200))) throw new Error('the agents were not throttled within 60 s');
  return {
    async lift() {
      for (const name of ['npd-fleet-agents', 'npd-fleet-hold'])
        await cp.request('DELETE', `${FC}/flowschemas/${name}`);
      await hold.stop();
      await cp.request('DELETE', `${FC}/prioritylevelconfigurations/${THROTTLE_LEVEL}`);
      const free = async () =>
        (await cp.request('GET', `/api/v1/nodes/${probeNode}`, { token: probeToken })).status === 200;
      if (!(await pollUntil(free, 60_000, 200))) throw new Error('the throttle did not lift within 60 s');
    },
  };
}
