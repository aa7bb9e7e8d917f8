// What a pod of the gpu component (or one of its variants) needs to reach NVML, as a list of problems:
// shared by the deploy tests of the components and the Helm tests of gpu.enabled, so both hold the
// same rendering to the same rules. docs/install.md "GPU nodes" explains each.
import { basename } from 'node:path';
import { parse } from 'yaml';
import {
  agentContainer,
  type Container,
  configMapData,
  type Doc,
  one,
  type PodSpec,
  podSpec,
} from './support.ts';

/**
 * Node labels that mark NVIDIA GPU nodes, with the value that does: the GPU Operator's
 * (controllers/state_manager.go, from node feature discovery), Karpenter's on AWS (well-known label of
 * the instance type) and GKE's (set on every GPU node pool, valued by GPU model: any value).
 */
export const GPU_NODE_LABELS: Readonly<Record<string, string | undefined>> = {
  'nvidia.com/gpu.present': 'true',
  'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia',
  'cloud.google.com/gke-accelerator': undefined,
};
/** The NVML monitor's default library: the soname, which the NVIDIA runtime puts on the loader path. */
export const NVML_SONAME = 'libnvidia-ml.so.1';

interface Term {
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Every pod the DaemonSet can make lands on a GPU node: its selector or each required term says so. */
function selectsGpuNodes(spec: PodSpec): boolean {
  const selector = (spec.nodeSelector ?? {}) as Record<string, string>;
  const marks = (key: string, value: string | undefined) =>
    key in GPU_NODE_LABELS && (GPU_NODE_LABELS[key] === undefined || GPU_NODE_LABELS[key] === value);
  if (Object.entries(selector).some(([k, v]) => marks(k, v))) return true;
  const affinity = spec.affinity as
    | { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Term[] } } }
    | undefined;
  const terms = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return false;
  const gpuExpr = (t: Term) =>
    (t.matchExpressions ?? []).some(
      (e) =>
        (e.operator === 'Exists' && GPU_NODE_LABELS[e.key] === undefined && e.key in GPU_NODE_LABELS) ||
        (e.operator === 'In' &&
          (e.values ?? []).length > 0 &&
          (e.values ?? []).every((v) => marks(e.key, v))),
    );
  return terms.every(gpuExpr);
}

function envProblems(c: Container): string[] {
  const env = new Map(c.env.map((e) => [e.name, e.value]));
  const out: string[] = [];
  if (env.get('NVIDIA_VISIBLE_DEVICES') !== 'all') out.push('NVIDIA_VISIBLE_DEVICES is not "all"');
  const caps = (env.get('NVIDIA_DRIVER_CAPABILITIES') ?? '').split(',');
  if (!caps.includes('utility') && !caps.includes('all'))
    out.push('NVIDIA_DRIVER_CAPABILITIES lacks "utility" (NVML)');
  // The runtime's CDI mode on a RHEL-family host mounts NVML there, maybe without a loader cache.
  if (!(env.get('LD_LIBRARY_PATH') ?? '').split(':').includes('/usr/lib64'))
    out.push('LD_LIBRARY_PATH lacks /usr/lib64');
  const resources = (c.resources ?? {}) as Record<string, Record<string, string> | undefined>;
  for (const kind of ['requests', 'limits'])
    if (resources[kind]?.['nvidia.com/gpu'] !== undefined) out.push(`${kind} a GPU (nvidia.com/gpu)`);
  return out;
}

/** The NVML monitor's library lies in a read-only host mount, or is the soname the runtime provides. */
function libraryProblems(spec: PodSpec, c: Container, library: string): string[] {
  if (!library.startsWith('/')) {
    return library === NVML_SONAME ? [] : [`library ${library} is neither the soname nor a path`];
  }
  const mount = c.volumeMounts
    .filter((m) => library.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  if (!mount) return [`library ${library} is in no mount`];
  const volume = spec.volumes.find((v) => v.name === mount.name);
  const out: string[] = [];
  if (!volume?.hostPath) out.push(`library ${library}: ${mount.mountPath} is not a host path`);
  if (mount.readOnly !== true) out.push(`library ${library}: ${mount.mountPath} is not read-only`);
  return out;
}

/** The one NVML monitor config the args name, parsed from the mounted ConfigMaps. */
function nvmlConfig(docs: readonly Doc[], c: Container): { library?: string; problem?: string } {
  const files = c.args
    .filter((a) => a.startsWith('--config.gpu-monitor='))
    .flatMap((a) => a.slice('--config.gpu-monitor='.length).split(','));
  if (files.length !== 1) return { problem: `${files.length} --config.gpu-monitor files, expected 1` };
  const text = configMapData(docs)[basename(files[0]!)];
  if (text === undefined) return { problem: `${files[0]} is not in the mounted ConfigMaps` };
  const cfg = parse(text) as { plugin?: string; library?: string };
  if (cfg.plugin !== 'nvml') return { problem: `${files[0]} is not an nvml config` };
  return { library: cfg.library ?? NVML_SONAME };
}

/** Why the rendered DaemonSet's pod would not get GPU health, or [] when nothing is missing. */
export function gpuPodProblems(docs: readonly Doc[]): string[] {
  const ds = one([...docs], 'DaemonSet');
  const spec = podSpec(ds);
  const c = agentContainer(ds);
  const problems = envProblems(c);
  if (!c.args.some((a) => /^--config\.system-log-monitor=(.*,)?\/config\/gpu\.yaml(,|$)/.test(a)))
    problems.push('the Xid rules (gpu.yaml) do not run');
  if (!selectsGpuNodes(spec)) problems.push('not restricted to GPU nodes');
  if (spec.runtimeClassName !== undefined && spec.runtimeClassName !== 'nvidia')
    problems.push(`runtimeClassName ${String(spec.runtimeClassName)}`);
  const { library, problem } = nvmlConfig(docs, c);
  if (problem) problems.push(problem);
  if (library) problems.push(...libraryProblems(spec, c, library));
  return problems;
}
