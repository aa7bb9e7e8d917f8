/**
 * One measured window of a fleet scenario: the agents' requests from the audit log, the API server's
 * CPU and /metrics, the neighbour's Lease renewals and the fleet's own counters, from before to after
 * `body`. The API server must be the same process at both ends (an outage is measured from the restart).
 */
import type { AuditRow } from '../fleet/audit-rows.ts';
import { agentRows, auditSize } from '../fleet/audit-rows.ts';
import { apiserverCpu, histogramQuantile, type Series, scrape } from '../fleet/apiserver.ts';
import type { FleetIdentity } from '../fleet/identities.ts';
import type { LeaseStats, Neighbour } from '../fleet/neighbour.ts';
import type { MetricTotals } from '../fleet/protocol.ts';
import { type LoadFigures, loadFigures } from '../fleet/window-stats.ts';
import { type Fleet, metricDelta } from '../fleet/workers.ts';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { loadNote } from './proc.ts';

export interface FleetBenchOptions {
  readonly nodes: number;
  readonly workers: number;
  readonly heartbeatSeconds: number;
  readonly rolloutSeconds: number;
  readonly steadySeconds: number;
  readonly outageSeconds: number;
  readonly throttleSeconds: number;
}

export interface FleetContext {
  readonly cp: ControlPlane;
  readonly fleet: Fleet;
  readonly neighbour: Neighbour;
  readonly names: readonly string[];
  /** An identity running no agent: it probes the throttle; its requests are left out. */
  readonly probe: FleetIdentity;
  readonly dir: string;
  readonly opts: FleetBenchOptions;
}

export interface Window {
  readonly label: string;
  readonly t0: number;
  readonly seconds: number;
  readonly rows: AuditRow[];
  readonly load: LoadFigures;
  readonly apiserverCpu: number;
  readonly lease: LeaseStats;
  /** The Lease PUTs' p99 as the API server's own histogram has it (bucket upper bound, s). */
  readonly leaseServerP99: number;
  readonly before: Series;
  readonly after: Series;
  /** What the fleet's counters grew by. */
  readonly metrics: MetricTotals;
  readonly load1: string;
  /** Scenario-specific lines, and figures the report picks up. */
  readonly notes: string[];
  readonly recoverySeconds?: number;
  readonly herd?: number;
}

export type Extra = { notes?: string[]; recoverySeconds?: number; herd?: number };

export async function measure(
  ctx: FleetContext,
  label: string,
  body: (t0: number) => Promise<Extra | undefined>,
): Promise<Window> {
  const { cp, fleet, neighbour } = ctx;
  const [offset, cpu0, before, m0] = [
    auditSize(cp.auditLogPath),
    apiserverCpu(cp),
    await scrape(cp),
    await fleet.metrics(),
  ];
  const t0 = Date.now();
  const extra = (await body(t0)) ?? {};
  const t1 = Date.now();
  const cpu = apiserverCpu(cp) - cpu0;
  const [after, m1] = [await scrape(cp), await fleet.metrics()];
  const rows = agentRows(cp.auditLogPath, offset).filter(
    (r) => r.node !== ctx.probe.name && r.at >= t0 && r.at < t1,
  );
  const seconds = (t1 - t0) / 1000;
  return {
    label,
    t0,
    seconds,
    rows,
    load: loadFigures(rows, seconds),
    apiserverCpu: cpu,
    lease: await neighbour.stats(t0, t1),
    leaseServerP99: histogramQuantile(before, after, { resource: 'leases', verb: 'PUT' }, 0.99).seconds,
    before,
    after,
    metrics: metricDelta(m1, m0),
    load1: loadNote(),
    notes: extra.notes ?? [],
    ...(extra.recoverySeconds !== undefined ? { recoverySeconds: extra.recoverySeconds } : {}),
    ...(extra.herd !== undefined ? { herd: extra.herd } : {}),
  };
}
