import { isDeepStrictEqual } from 'node:util';
import type { Registry } from 'prom-client';
import type { ApiRequest, JsonObject, NodeSnapshot } from '../../src/kube/client.ts';
import { nodeSnapshot } from '../../src/kube/client.ts';
import { ApiError } from '../../src/kube/errors.ts';
import type { TaintClient } from '../../src/taints/controller.ts';

interface Call {
  readonly method: string;
  readonly query?: Readonly<Record<string, string>> | undefined;
  readonly body?: unknown;
}

/**
 * A Node held as JSON, behind the two calls the taint controller makes. PATCH applies the JSON patch
 * the way kube-apiserver's JSON patch library does (`test` with null passes on an absent member; a
 * failed op answers 422) and then drops empty taints and annotations, as the API's omitempty does.
 */
export class FakeNodeApi implements TaintClient {
  node: JsonObject;
  readonly calls: Call[] = [];
  /** Consumed one per request, in order: an error fails that request, undefined lets it through. */
  readonly failures: (Error | undefined)[] = [];
  /** Runs just before a PATCH applies: another writer changing the Node between our read and write. */
  beforePatch: ((node: JsonObject) => void) | undefined;
  /** When set, every request waits for it, to hold a reconcile in flight. */
  gate: Promise<void> | undefined;
  inFlight = 0;
  maxInFlight = 0;

  constructor(taints: JsonObject[] = [], annotations: Record<string, string> = {}) {
    this.node = { metadata: { name: 'n1', uid: 'u1' }, spec: {} };
    this.setTaints(taints);
    if (Object.keys(annotations).length > 0)
      (this.node.metadata as JsonObject).annotations = { ...annotations };
  }

  get taints(): JsonObject[] {
    return structuredClone(((this.node.spec as JsonObject).taints as JsonObject[] | undefined) ?? []);
  }

  get annotations(): Record<string, string> {
    return structuredClone(((this.node.metadata as JsonObject).annotations as Record<string, string>) ?? {});
  }

  setTaints(taints: JsonObject[]): void {
    (this.node.spec as JsonObject).taints = structuredClone(taints);
    omitEmpty(this.node);
  }

  patches(): unknown[] {
    return this.calls.filter((c) => c.method === 'PATCH').map((c) => c.body);
  }

  async getNode(_name: string, opts: { resourceVersion?: string } = {}): Promise<NodeSnapshot> {
    const query = opts.resourceVersion === undefined ? undefined : { resourceVersion: opts.resourceVersion };
    return nodeSnapshot(await this.call({ method: 'GET', query }, () => this.node));
  }

  request(req: ApiRequest): Promise<JsonObject> {
    if (
      req.method !== 'PATCH' ||
      req.contentType !== 'application/json-patch+json' ||
      req.resource !== 'nodes'
    )
      throw new Error(`unexpected request ${req.method} ${req.path} ${req.contentType}`);
    return this.call({ method: 'PATCH', body: req.body }, () => {
      this.beforePatch?.(this.node);
      const next = structuredClone(this.node);
      applyJsonPatch(next, req.body as Op[]);
      omitEmpty(next);
      this.node = next;
      return next;
    });
  }

  private async call(entry: Call, run: () => JsonObject): Promise<JsonObject> {
    this.calls.push(entry);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.gate;
      const failure = this.failures.shift();
      if (failure) throw failure;
      return structuredClone(run());
    } finally {
      this.inFlight--;
    }
  }
}

interface Op {
  op: string;
  path: string;
  value?: unknown;
}

function invalid(message: string): ApiError {
  return new ApiError(`PATCH: 422 Invalid: ${message}`, 422, 'Invalid');
}

function parent(doc: JsonObject, path: string): [Record<string, unknown> | unknown[], string] {
  const tokens = path
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = tokens.pop() as string;
  let at: unknown = doc;
  for (const t of tokens) {
    at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[t] : undefined;
    if (at === undefined || at === null) throw invalid(`missing path ${path}`);
  }
  return [at as Record<string, unknown>, last];
}

function applyJsonPatch(doc: JsonObject, ops: readonly Op[]): void {
  for (const op of ops) {
    const [container, key] = parent(doc, op.path);
    const map = container as Record<string, unknown>;
    if (op.op === 'test') {
      const have = map[key] ?? null;
      if (!isDeepStrictEqual(have, op.value ?? null)) throw invalid(`testing value ${op.path} failed`);
    } else if (op.op === 'add') {
      if (Array.isArray(container) && key === '-') container.push(structuredClone(op.value));
      else map[key] = structuredClone(op.value);
    } else if (op.op === 'remove') {
      if (!(key in map)) throw invalid(`remove of missing ${op.path}`);
      delete map[key];
    } else {
      throw invalid(`unsupported op ${op.op}`);
    }
  }
}

function omitEmpty(node: JsonObject): void {
  const spec = node.spec as JsonObject;
  if (Array.isArray(spec.taints) && spec.taints.length === 0) delete spec.taints;
  const md = node.metadata as JsonObject;
  if (md.annotations && Object.keys(md.annotations as object).length === 0) delete md.annotations;
}

/** Reads a sample of a counter; 0 when the labelled series does not exist yet. */
export async function sample(registry: Registry, name: string, labels: Record<string, string> = {}) {
  if (!registry.getSingleMetric(name)) return undefined;
  return (await seriesValue(registry, name, labels)) ?? 0;
}

/** One series' value, undefined when the series was never created (where `sample` reads 0). */
export async function seriesValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return undefined;
  const { values } = await metric.get();
  return values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}
