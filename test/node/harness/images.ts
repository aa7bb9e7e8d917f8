/**
 * Images for the node without a registry: the agent image from test/container/build-image.sh and a
 * local pause image (the sandbox image containerd's CRI plugin starts for every pod; its default,
 * registry.k8s.io/pause, cannot be pulled here). Both come out of podman's storage as OCI archives
 * and go into containerd's k8s.io namespace, so pods use them with imagePullPolicy IfNotPresent.
 */
import * as path from 'node:path';
import { run } from '../../e2e/harness/processes.ts';
import { PAUSE_IMAGE } from './containerd.ts';

export const AGENT_IMAGE = process.env.NPD_NODE_IMAGE ?? 'localhost/node-problem-detector:ci';
const PAUSE_BASE = 'docker.io/library/debian:bookworm-slim';

async function must(cmd: string, args: string[], timeoutMs = 600_000): Promise<string> {
  const r = await run(cmd, args, { timeoutMs });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
  return r.stdout.trim();
}

async function imageExists(ref: string): Promise<boolean> {
  return (await run('podman', ['image', 'exists', ref])).code === 0;
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

/** Writes `ref` from podman's storage to <dir>/<name>.tar as an OCI archive; returns the path. */
export async function saveImage(ref: string, dir: string): Promise<string> {
  if (!(await imageExists(ref))) {
    throw new Error(`${ref} is not in podman's storage: run test/container/build-image.sh first`);
  }
  const file = path.join(dir, `${ref.replace(/[^A-Za-z0-9.-]/g, '_')}.tar`);
  await must('podman', ['save', '--format', 'oci-archive', '-o', file, ref]);
  return file;
}
