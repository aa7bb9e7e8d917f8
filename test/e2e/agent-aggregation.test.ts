// Two monitors that opt in to sharing one condition type: the Node shows the worst status, whichever
// monitor spoke last (NPD #566, #664).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  kmsg,
  marker,
  type NodeConditionJson,
  startAgent,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

let cp: ControlPlane;
let agent: AgentProcess;
const id = marker('agg');
const type = `Shared${id}`;

function monitor(dir: string, name: string): string {
  return writeConfig(dir, `${name}.yaml`, [
    'plugin: kmsg',
    `source: ${name}-${id}`,
    'conditions:',
    `  - type: ${type}`,
    `    reason: ${name}OK`,
    '    message: fine',
    '    aggregate: true',
    'rules:',
    '  - type: permanent',
    `    condition: ${type}`,
    `    reason: ${name}Broken`,
    `    pattern: '${id} ${name} broke'`,
    `    recoverPattern: '${id} ${name} fixed'`,
    // A temporary rule: its event carries the monitor's full (False) condition list, as in NPD.
    '  - type: temporary',
    `    reason: ${name}Noise`,
    `    pattern: '${id} ${name} noise'`,
  ]);
}

before(
  async () => {
    cp = await startControlPlane();
    const dir = workDir();
    agent = await startAgent(
      agentArgs(cp.agentKubeconfig, cp.nodeName, [monitor(dir, 'alpha'), monitor(dir, 'beta')]),
      {
        KUBECONFIG: '',
      },
    );
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  const code = await agent?.stop();
  await cp?.stop({ failed: code !== 0 });
});

async function shared(): Promise<NodeConditionJson | undefined> {
  const node = JSON.parse(await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'json'])) as {
    status?: { conditions?: NodeConditionJson[] };
  };
  return node.status?.conditions?.find((c) => c.type === type);
}

test('worst status wins on the Node, with a deterministic reason', async () => {
  await waitFor(async () => (await shared())?.reason === 'alphaOK', 20_000, agent.output);
  kmsg(`${id} beta broke`);
  await waitFor(async () => (await shared())?.reason === 'betaBroken', 20_000, agent.output);
  // alpha reports its False condition after beta's True; the Node must stay True while beta is broken.
  kmsg(`${id} alpha noise`);
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal((await shared())?.status, 'True');
  kmsg(`${id} beta fixed`);
  await waitFor(async () => (await shared())?.status === 'False', 20_000, agent.output);
  assert.equal((await shared())?.reason, 'alphaOK', 'among equals the first source by name');
});
