/**
 * Images for the node. The agent image from test/container/build-image.sh is pushed from podman's
 * storage to a registry on 127.0.0.1, and the kubelet pulls it from there as a node pulls a release.
 * The local pause image (the sandbox image containerd's CRI plugin starts for every pod; its default,
 * registry.k8s.io/pause, cannot be pulled here) is preloaded into containerd's k8s.io namespace as an
 * OCI archive, as node images preload theirs.
 */
import * as path from 'node:path';
import { run } from '../../e2e/harness/processes.ts';
import { PAUSE_IMAGE } from './containerd.ts';

/** The agent image in podman's storage, before it is pushed. */
export const AGENT_SOURCE = process.env.NPD_NODE_IMAGE ?? 'localhost/node-problem-detector:ci';
const PAUSE_BASE = 'docker.io/library/debian:bookworm-slim';

async function must(cmd: string, args: string[], timeoutMs = 600_000): Promise<string> {
  const r = await run(cmd, args, { timeoutMs });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
  return r.stdout.trim();
}

async function imageExists(ref: string): Promise<boolean> {
  return (await run('podman', ['image', 'exists', ref])).code === 0;
}

async function requireImage(ref: string): Promise<void> {
  if (!(await imageExists(ref))) {
    throw new Error(`${ref} is not in podman's storage: run test/container/build-image.sh first`);
  }
}

/** The pause image: build-image.sh's Debian base with a command that waits forever. */
export async function ensurePauseImage(): Promise<void> {
  if (await imageExists(PAUSE_IMAGE)) return;
  if (!(await imageExists(PAUSE_BASE))) {
    throw new Error(`${PAUSE_BASE} is missing: run test/container/build-image.sh first (it makes the base)`);
  }
  const c = await must('buildah', ['from', '--pull=never', PAUSE_BASE]);
  try {
    await must('buildah', [
      'config',
      '--entrypoint',
      '[]',
      '--cmd',
      '["sleep","infinity"]',
      '--stop-signal',
      'KILL',
      c,
    ]);
    await must('buildah', ['commit', '-q', c, PAUSE_IMAGE]);
  } finally {
    await run('buildah', ['rm', c]);
  }
}

/** Pushes `source` from podman's storage to `dest` (host:port/name:tag on a plain-HTTP registry). */
export async function pushImage(source: string, dest: string): Promise<void> {
  await requireImage(source);
  await must('skopeo', [
    'copy',
    '-q',
    '--dest-tls-verify=false',
    `containers-storage:${source}`,
    `docker://${dest}`,
  ]);
}

/** Writes `ref` from podman's storage to <dir>/<name>.tar as an OCI archive; returns the path. */
export async function saveImage(ref: string, dir: string): Promise<string> {
  await requireImage(ref);
  const file = path.join(dir, `${ref.replace(/[^A-Za-z0-9.-]/g, '_')}.tar`);
  await must('podman', ['save', '--format', 'oci-archive', '-o', file, ref]);
  return file;
}
