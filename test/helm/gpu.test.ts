// The chart's gpu values: gpu.enabled with each variant (gpu.runtimeClassName, gpu.driverRoot,
// gpu.nodeSelector) renders a pod that gets NVML (the same checks as the kustomize components,
// test/deploy/gpu-pod.ts); values the chart cannot honour fail the install with the reason, each beside
// the same install with a good value. agreement.test.ts compares each variant with its component.
//   node --import tsx --test test/helm/gpu.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gpuPodProblems } from '../deploy/gpu-pod.ts';
import { agentContainer, one, podSpec } from '../deploy/support.ts';
import { helmTemplate, helmTemplateResult, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();

const GKE = '/home/kubernetes/bin/nvidia';
const OPERATOR = '/run/nvidia/driver';

describe('gpu.* values', { skip }, () => {
  const render = (gpu: object, more: object = {}) =>
    helmTemplate(tools!, { gpu: { enabled: true, ...gpu }, ...more });

  for (const [name, gpu] of [
    ['the NVIDIA runtime', {}],
    ['runtimeClassName nvidia', { runtimeClassName: 'nvidia' }],
    ["GKE's driver folder", { driverRoot: GKE }],
    ["the GPU Operator's driver root", { driverRoot: OPERATOR }],
  ] as const) {
    test(`${name}: the pod gets NVML without a GPU request, on GPU nodes only`, async () => {
      assert.deepEqual(gpuPodProblems(await render(gpu)), []);
    });
  }

  test('control: gpu.enabled false renders none of it', async () => {
    const problems = gpuPodProblems(await helmTemplate(tools!, {}));
    assert.ok(problems.includes('NVIDIA_VISIBLE_DEVICES is not "all"'), problems.join('; '));
    assert.ok(problems.includes('not restricted to GPU nodes'), problems.join('; '));
  });

  test("gpu.nodeSelector replaces the GPU Operator's label, merged into nodeSelector (EKS with Karpenter)", async () => {
    const karpenter = 'karpenter.k8s.aws/instance-gpu-manufacturer';
    const docs = await render({ nodeSelector: { 'nvidia.com/gpu.present': null, [karpenter]: 'nvidia' } });
    assert.deepEqual(podSpec(one(docs, 'DaemonSet')).nodeSelector, {
      'kubernetes.io/os': 'linux',
      [karpenter]: 'nvidia',
    });
    assert.deepEqual(gpuPodProblems(docs), []);
    const all = await render({ nodeSelector: { 'nvidia.com/gpu.present': null } });
    assert.deepEqual(gpuPodProblems(all), ['not restricted to GPU nodes'], 'control: no GPU label left');
  });

  test('a driverRoot without a known layout fails the install, naming the choices', async () => {
    const r = await helmTemplateResult(tools!, { gpu: { enabled: true, driverRoot: '/opt/nvidia' } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /\/gpu\/driverRoot/);
    assert.match(r.stderr, /\/home\/kubernetes\/bin\/nvidia/);
  });

  test("GKE's affinity cannot be combined with your own node affinity; other affinity merges", async () => {
    const nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] }],
      },
    };
    const r = await helmTemplateResult(tools!, {
      gpu: { enabled: true, driverRoot: GKE },
      affinity: { nodeAffinity },
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /leave affinity\.nodeAffinity unset/);
    const podAffinity = { preferredDuringSchedulingIgnoredDuringExecution: [] };
    const spec = podSpec(one(await render({ driverRoot: GKE }, { affinity: { podAffinity } }), 'DaemonSet'));
    assert.deepEqual((spec.affinity as { podAffinity?: object }).podAffinity, podAffinity);
    assert.ok((spec.affinity as { nodeAffinity?: object }).nodeAffinity);
  });

  test('the GPU monitors only with gpu.enabled; runtimeClassName only then too', async () => {
    const off = one(
      await helmTemplate(tools!, { gpu: { runtimeClassName: 'nvidia', driverRoot: GKE } }),
      'DaemonSet',
    );
    assert.ok(!agentContainer(off).args.some((a) => a.includes('gpu')), agentContainer(off).args.join(' '));
    assert.equal(podSpec(off).runtimeClassName, undefined);
    assert.ok(!podSpec(off).volumes.some((v) => v.name === 'nvidia-driver'));
    const on = one(await render({ runtimeClassName: 'nvidia' }), 'DaemonSet');
    assert.equal(podSpec(on).runtimeClassName, 'nvidia', 'control');
  });
});
