// `podman run` flags derived from a rendered DaemonSet (deploy/base and its components), so the
// container test runs the image with exactly the manifest's security context, user, mounts, env and
// args, and the two cannot drift. Fields the translation does not know fail the test rather than being
// dropped. The one deviation from a pod: the container shares the host's network namespace, because the
// test API server listens on 127.0.0.1 only; the listeners therefore move to free ports.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentContainer,
  type Container,
  configMapData,
  type Doc,
  type Obj,
  one,
  podSpec,
} from '../deploy/support.ts';

/** What a pod has that the DaemonSet does not say: its node, its service account and the API server. */
export interface PodContext {
  readonly nodeName: string;
  /** Holds token, ca.crt, namespace: mounted where kubelet projects the service-account token. */
  readonly serviceAccountDir: string;
  readonly apiserverPort: number;
  /** Where ConfigMaps and DirectoryOrCreate stand-ins are written. */
  readonly workDir: string;
  readonly statusPort: number;
  readonly metricsPort: number;
}

const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
const KNOWN_SECURITY = new Set([
  'privileged',
  'runAsUser',
  'runAsGroup',
  'runAsNonRoot',
  'readOnlyRootFilesystem',
  'allowPrivilegeEscalation',
  'capabilities',
  'seccompProfile',
]);

/** Flags for the container's securityContext (privileged, user, capabilities, no_new_privs, seccomp). */
export function securityFlags(sc: Obj): string[] {
  for (const k of Object.keys(sc))
    assert.ok(KNOWN_SECURITY.has(k), `securityContext.${k} has no podman flag here`);
  const out: string[] = [];
  if (sc.privileged === true) out.push('--privileged');
  if (sc.runAsUser !== undefined) out.push(`--user=${sc.runAsUser}:${sc.runAsGroup ?? 0}`);
  if (sc.readOnlyRootFilesystem === true) out.push('--read-only', '--read-only-tmpfs=false');
  if (sc.allowPrivilegeEscalation === false) out.push('--security-opt=no-new-privileges');
  const caps = (sc.capabilities ?? {}) as { drop?: string[]; add?: string[] };
  for (const c of caps.drop ?? []) out.push(`--cap-drop=${c}`);
  for (const c of caps.add ?? []) out.push(`--cap-add=${c}`);
  const seccomp = (sc.seccompProfile as { type?: string } | undefined)?.type;
  if (seccomp === 'Unconfined') out.push('--security-opt=seccomp=unconfined');
  else assert.ok(seccomp === undefined || seccomp === 'RuntimeDefault', `seccompProfile ${seccomp}`);
  return out;
}

/** Bind mounts and tmpfs for the container's volumeMounts, as kubelet would set them up. */
function mountFlags(docs: readonly Doc[], c: Container, ctx: PodContext): string[] {
  const volumes = podSpec(one([...docs], 'DaemonSet')).volumes;
  const out: string[] = [];
  for (const m of c.volumeMounts) {
    const v = volumes.find((x) => x.name === m.name);
    assert.ok(v, `volume ${m.name}`);
    const ro = m.readOnly ? ':ro' : '';
    if (v.projected || v.configMap) {
      const dir = join(ctx.workDir, `volume-${m.name}`);
      mkdirSync(dir, { recursive: true });
      for (const [file, text] of Object.entries(configMapData(docs))) writeFileSync(join(dir, file), text);
      out.push(`--volume=${dir}:${m.mountPath}${ro}`);
    } else if (v.emptyDir) {
      const e = v.emptyDir as { medium?: string; sizeLimit?: string };
      assert.equal(e.medium, 'Memory', 'only in-memory emptyDirs are translated');
      const size = e.sizeLimit ? `,size=${e.sizeLimit.replace(/Mi$/, 'm')}` : '';
      out.push(`--tmpfs=${m.mountPath}:rw${size}`);
    } else if (v.hostPath) {
      let src = v.hostPath.path;
      // kubelet would create the directory on the node; the test leaves the host alone.
      if (v.hostPath.type === 'DirectoryOrCreate' && !existsSync(src)) {
        src = join(ctx.workDir, `volume-${m.name}`);
        mkdirSync(src, { recursive: true });
      }
      assert.ok(existsSync(src), `hostPath ${src} (${v.hostPath.type}) exists on this machine`);
      out.push(`--volume=${src}:${m.mountPath}${ro}`);
    } else {
      assert.fail(`volume ${m.name}: only configMap, projected, emptyDir and hostPath are translated`);
    }
  }
  return out;
}

/** The env the pod gets: the container's own (fieldRefs resolved) plus what kubelet always injects. */
function envFlags(c: Container, ctx: PodContext): string[] {
  const out = [
    `--env=KUBERNETES_SERVICE_HOST=127.0.0.1`,
    `--env=KUBERNETES_SERVICE_PORT=${ctx.apiserverPort}`,
  ];
  for (const e of c.env) {
    if (e.value !== undefined) out.push(`--env=${e.name}=${e.value}`);
    else {
      const path = (e.valueFrom as { fieldRef?: { fieldPath?: string } } | undefined)?.fieldRef?.fieldPath;
      assert.equal(path, 'spec.nodeName', `env ${e.name}: only the spec.nodeName fieldRef is translated`);
      out.push(`--env=${e.name}=${ctx.nodeName}`);
    }
  }
  return out;
}

/** The container's args with the listener ports moved (host network: fixed ports may be taken). */
export function containerArgs(c: Container, ctx: PodContext): string[] {
  return c.args.map((a) =>
    a.startsWith('--port=')
      ? `--port=${ctx.statusPort}`
      : a.startsWith('--prometheus-port=')
        ? `--prometheus-port=${ctx.metricsPort}`
        : a,
  );
}

/**
 * `podman run` arguments (without `podman run` and the image) for the DaemonSet's agent container.
 * `securityContext` replaces the manifest's, for the negative control.
 */
export function podmanRunFlags(docs: readonly Doc[], ctx: PodContext, securityContext?: Obj): string[] {
  const ds = one([...docs], 'DaemonSet');
  const spec = podSpec(ds);
  const c = agentContainer(ds);
  assert.ok(!spec.hostPID && !spec.hostIPC, 'hostPID/hostIPC are not translated');
  const out = [
    ...securityFlags(securityContext ?? c.securityContext),
    ...mountFlags(docs, c, ctx),
    ...envFlags(c, ctx),
  ];
  if (spec.automountServiceAccountToken !== false)
    out.push(`--volume=${ctx.serviceAccountDir}:${SERVICE_ACCOUNT_MOUNT}:ro`);
  out.push('--network=host');
  return out;
}
