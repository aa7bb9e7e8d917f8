// Client-side checks of the gpu component and its variants (deploy/components/gpu, gpu-runtime-class,
// gpu-gke, gpu-operator): each renders over deploy/base with the NVIDIA runtime's env and no GPU
// request, on GPU nodes only, with both GPU monitors and an NVML config whose library the pod can load
// (gpu-pod.ts); the variants' configs are rules/gpu-nvml.yaml but for the library; broken renderings
// are caught, each beside the same check passing on the shipped one. server-dry-run.test.ts has the
// API server accept each; test/container runs the gpu component's pod with a fake NVML.
//   node --import tsx --test test/deploy/manifests-gpu.test.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { gpuPodProblems, NVML_SONAME } from './gpu-pod.ts';
import {
  agentContainer,
  configMapData,
  type Doc,
  kubectlSkip as skip,
  kustomizeWith,
  one,
  podSpec,
  ROOT,
  renderBase,
} from './support.ts';

const VARIANT_CONFIGS = {
  'gpu-gke': ['gpu-nvml-gke.yaml', '/usr/local/nvidia/lib64/libnvidia-ml.so.1'],
  'gpu-operator': [
    'gpu-nvml-gpu-operator.yaml',
    '/host/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1',
  ],
} as const;

const ds = (docs: Doc[]) => one(docs, 'DaemonSet');
/** A deep copy of `docs` with `edit` applied to the DaemonSet's pod spec. */
function broken(docs: Doc[], edit: (spec: ReturnType<typeof podSpec>) => void): Doc[] {
  const copy = structuredClone(docs);
  edit(podSpec(ds(copy)));
  return copy;
}
const loadYaml = (path: string) => parse(readFileSync(join(ROOT, path), 'utf8')) as Record<string, unknown>;

describe('deploy/components/gpu and its variants', { skip }, () => {
  const render = (component: string) => kustomizeWith([component]);

  for (const component of ['gpu', 'gpu-runtime-class', 'gpu-gke', 'gpu-operator']) {
    test(`${component}: the NVIDIA runtime's env, no GPU request, GPU nodes, both monitors, a loadable NVML`, () => {
      assert.deepEqual(gpuPodProblems(render(component)), []);
    });
  }

  test('control: deploy/base alone has none of it', () => {
    const problems = gpuPodProblems(renderBase());
    for (const p of [
      /NVIDIA_VISIBLE_DEVICES/,
      /NVIDIA_DRIVER_CAPABILITIES/,
      /LD_LIBRARY_PATH/,
      /gpu\.yaml/,
      /GPU nodes/,
      /0 --config\.gpu-monitor/,
    ])
      assert.ok(
        problems.some((x) => p.test(x)),
        `${p} in ${problems.join('; ')}`,
      );
  });

  test('gpu: the soname from the runtime, the GPU Operator label, nothing else of the pod changes', () => {
    const docs = render('gpu');
    const spec = podSpec(ds(docs));
    assert.deepEqual(spec.nodeSelector, { 'kubernetes.io/os': 'linux', 'nvidia.com/gpu.present': 'true' });
    assert.equal(
      (parse(configMapData(docs)['gpu-nvml.yaml']!) as { library?: string }).library ?? NVML_SONAME,
      NVML_SONAME,
    );
    const base = podSpec(ds(renderBase()));
    assert.deepEqual(spec.volumes, base.volumes, 'no host folder: the runtime mounts the driver');
    assert.equal(spec.runtimeClassName, undefined);
    assert.equal(podSpec(ds(render('gpu-runtime-class'))).runtimeClassName, 'nvidia');
  });

  test('gpu-gke: GKE driver folder read-only at /usr/local/nvidia, GKE GPU nodes by affinity', () => {
    const docs = render('gpu-gke');
    const spec = podSpec(ds(docs));
    const v = spec.volumes.find((x) => x.name === 'nvidia-driver');
    assert.deepEqual(v?.hostPath, { path: '/home/kubernetes/bin/nvidia', type: 'Directory' });
    const m = agentContainer(ds(docs)).volumeMounts.find((x) => x.name === 'nvidia-driver');
    assert.deepEqual(m, {
      name: 'nvidia-driver',
      mountPath: '/usr/local/nvidia',
      readOnly: true,
      mountPropagation: 'HostToContainer',
    });
    assert.deepEqual(spec.nodeSelector, { 'kubernetes.io/os': 'linux' }, 'no GPU Operator label on GKE');
    assert.match(
      JSON.stringify(spec.affinity),
      /"key":"cloud.google.com\/gke-accelerator","operator":"Exists"/,
    );
  });

  test('gpu-operator: the driver container root read-only below /host, created if absent', () => {
    const docs = render('gpu-operator');
    const spec = podSpec(ds(docs));
    const v = spec.volumes.find((x) => x.name === 'nvidia-driver');
    assert.deepEqual(v?.hostPath, { path: '/run/nvidia/driver', type: 'DirectoryOrCreate' });
    const m = agentContainer(ds(docs)).volumeMounts.find((x) => x.name === 'nvidia-driver');
    assert.equal(m?.mountPath, '/host/run/nvidia/driver');
  });

  for (const [component, [file, library]] of Object.entries(VARIANT_CONFIGS)) {
    test(`${component}: ${file} is rules/gpu-nvml.yaml with the library in the mount`, () => {
      const { library: got, ...rest } = loadYaml(`deploy/components/${component}/${file}`);
      const { library: _shipped, ...shipped } = loadYaml('rules/gpu-nvml.yaml');
      assert.equal(got, library);
      assert.deepEqual(rest, shipped, `${file} drifted from rules/gpu-nvml.yaml`);
      assert.equal(
        configMapData(render(component))[file],
        readFileSync(join(ROOT, `deploy/components/${component}/${file}`), 'utf8'),
      );
    });
  }

  test('a broken variant is caught; the shipped one passes the same check', () => {
    const gke = render('gpu-gke');
    assert.deepEqual(gpuPodProblems(gke), [], 'control');
    const moved = broken(gke, (s) => {
      const m = s.containers[0]!.volumeMounts.find((x) => x.name === 'nvidia-driver')!;
      m.mountPath = '/usr/local/nvidia-driver';
    });
    assert.deepEqual(gpuPodProblems(moved), [
      'library /usr/local/nvidia/lib64/libnvidia-ml.so.1 is in no mount',
    ]);
    const writable = broken(gke, (s) => {
      delete s.containers[0]!.volumeMounts.find((x) => x.name === 'nvidia-driver')!.readOnly;
    });
    assert.match(gpuPodProblems(writable).join(), /is not read-only/);
    const everywhere = broken(gke, (s) => {
      delete s.affinity;
    });
    assert.deepEqual(gpuPodProblems(everywhere), ['not restricted to GPU nodes']);
    const requesting = broken(render('gpu'), (s) => {
      s.containers[0]!.resources.limits['nvidia.com/gpu'] = '1';
    });
    assert.deepEqual(gpuPodProblems(requesting), ['limits a GPU (nvidia.com/gpu)']);
    const cacheOnly = broken(render('gpu'), (s) => {
      const c = s.containers[0]!;
      c.env = c.env.filter((e) => e.name !== 'LD_LIBRARY_PATH');
    });
    assert.deepEqual(gpuPodProblems(cacheOnly), ['LD_LIBRARY_PATH lacks /usr/lib64']);
  });

  test('with journald and node-probes listed first, a variant keeps every monitor of each', () => {
    const docs = kustomizeWith(['journald', 'node-probes', 'gpu-gke']);
    assert.deepEqual(gpuPodProblems(docs), []);
    const args = agentContainer(ds(docs)).args;
    assert.ok(
      args.includes(
        '--config.system-log-monitor=/config/containerd.yaml,/config/systemd.yaml,/config/kubelet.yaml',
      ),
    );
    assert.ok(args.includes('--config.probe-monitor=/config/probes-node.yaml'));
  });
});
