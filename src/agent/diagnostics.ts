import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { Condition } from '../core/types.ts';
import { DiagnosticsController } from '../diagnostics/controller.ts';
import { bundleParts } from '../diagnostics/parts.ts';
import { RecentEvents } from '../diagnostics/recent-events.ts';
import {
  KEY_ANNOTATION,
  newUploadKey,
  type UploadKey,
  uploadKeyFromPem,
  uploadTarget,
} from '../diagnostics/sealed-url.ts';
import { uploadBundle, uploadPolicy } from '../diagnostics/upload.ts';
import { hostPaths } from '../host/paths.ts';
import type { KubeClient } from '../kube/client.ts';
import {
  deleteNodeDiagnostic,
  listNodeDiagnostics,
  patchNodeDiagnosticStatus,
} from '../kube/node-diagnostics.ts';
import type { Options } from './options.ts';

/** The running --diagnostics feature: the events it keeps for bundles, and how to stop it. */
export interface DiagnosticsFeature {
  readonly events: RecentEvents;
  /** A /healthz line when the feature is degraded (a backlog over one listing), else undefined. */
  health(): string | undefined;
  stop(): void;
}

export interface DiagnosticsDeps {
  readonly options: Options;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
}

/** Opt-in: without --diagnostics nothing is built, so no NodeDiagnostic is ever read. */
export function createDiagnostics(
  deps: DiagnosticsDeps,
  client: KubeClient,
  conditions: () => readonly Condition[],
): DiagnosticsFeature | undefined {
  const { options, clock, registry, logger } = deps;
  if (!options.diagnostics) return undefined;
  const nodeName = options.nodeName;
  const events = new RecentEvents();
  const sources = {
    paths: hostPaths(options.hostRoot, options.hostProc),
    clock,
    journalctl: 'journalctl',
    conditions,
    events: () => events.list(),
    metrics: () => registry.metrics(),
  };
  const policy = uploadPolicy({
    allowed: options.diagnosticsUploadAllow,
    nodeAddresses: async () => [...interfaceAddresses(), ...(await nodeStatusAddresses(client, nodeName))],
  });
  const key = diagnosticsUploadKey(options.diagnosticsKeyFile, logger);
  const annotations = { [KEY_ANNOTATION]: key.annotation };
  const controller = new DiagnosticsController({
    api: {
      list: () => listNodeDiagnostics(client, nodeName),
      patchStatus: (name, status) => patchNodeDiagnosticStatus(client, name, status),
      delete: (name, uid) => deleteNodeDiagnostic(client, name, uid),
      publishKey: async () => void (await client.patchNodeStatus(nodeName, { metadata: { annotations } })),
    },
    target: (req) => uploadTarget(req, key, options.diagnosticsAllowPlainUploadURL),
    nodeName,
    clock,
    registry,
    logger,
    parts: (sinceMinutes) => bundleParts(sources, sinceMinutes),
    upload: (url, body) => uploadBundle(url, body, clock, policy),
    pollPeriodMs: options.diagnosticsPollMs,
    finishedTtlMs: options.diagnosticsFinishedTtlMs,
  });
  controller.start();
  return { events, health: () => controller.health(), stop: () => controller.stop() };
}

/**
 * The key upload URLs are sealed to. With a key file (an emptyDir in the shipped manifests) it survives
 * a container restart, so a request sealed before a crash still opens; a new pod gets a new key. A
 * file that cannot be read or holds no X25519 key is replaced.
 */
export function diagnosticsUploadKey(file: string, logger: Logger): UploadKey {
  if (file === '') return newUploadKey();
  try {
    return uploadKeyFromPem(readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      logger.warn({ err, file }, 'the diagnostics key file holds no usable key; writing a new one');
  }
  const key = newUploadKey();
  try {
    writeFileSync(file, key.pem, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (err) {
    logger.warn(
      { err, file },
      'could not write the diagnostics key file; the key lasts until this process ends',
    );
  }
  return key;
}

/** The agent's interface addresses (the node's under hostNetwork): an upload must not be aimed at them. */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .map((i) => i?.address ?? '')
    .filter((a) => a !== '');
}

/**
 * The Node's status.addresses (InternalIP, ExternalIP): in the pod network the agent's interfaces are
 * the pod's, and the kubelet listens on these. Read at each upload (rare); none when the read fails,
 * which leaves the ranges and the interfaces refused.
 */
async function nodeStatusAddresses(client: KubeClient, nodeName: string): Promise<string[]> {
  try {
    const node = await client.request({
      method: 'GET',
      path: `/api/v1/nodes/${encodeURIComponent(nodeName)}`,
      resource: 'nodes',
    });
    const status = (node.status ?? {}) as { addresses?: { address?: unknown }[] };
    return (status.addresses ?? []).map((a) => a.address).filter((a): a is string => typeof a === 'string');
  } catch {
    return [];
  }
}
