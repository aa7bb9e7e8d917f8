import type { Counter, Gauge, Registry } from 'prom-client';
import { counter, gauge, zeroed } from '../../core/metrics.ts';
import type { Gpu } from './check.ts';
import { kernelBusId } from './identity.ts';

/** What the monitor is doing: `running` checks GPUs; the others report no GPU condition (or Unknown). */
export const GPU_MONITOR_STATES = ['running', 'no_library', 'no_gpu', 'nvml_failed'] as const;
export type GpuMonitorState = (typeof GPU_MONITOR_STATES)[number];

/** NVML event types as counted (api.ts EVENT bits; `other` for any bit the monitor did not ask for). */
const EVENT_KINDS = ['xid', 'dbe', 'sbe_storm', 'unavailable', 'recovery_action', 'other'] as const;
export type GpuEventKind = (typeof EVENT_KINDS)[number];

type GpuLabel = 'source' | 'gpu' | 'uuid' | 'pci_bus_id';

/**
 * The NVML monitor's metrics (docs/metrics.md, "GPU (NVML)"). Per-GPU labels are bounded by the GPUs
 * NVML enumerates (index, UUID, PCI bus id as the kernel log writes it); check and call names are the
 * code's own. Xid counts by code belong to the Xid dedupe stage, counted once across both sources.
 */
export class GpuMetrics {
  private readonly registry: Registry;
  private readonly source: string;
  private readonly healthy: Gauge<GpuLabel>;
  private readonly findings: Gauge<GpuLabel | 'check' | 'severity'>;
  private readonly state: Gauge<'source' | 'state'>;
  private readonly nvmlErrors: Counter<'call' | 'code'>;
  private readonly checkErrors: Counter<'source' | 'check'>;
  private readonly events: Counter<'source' | 'type'>;
  private readonly unattributed: Counter<'source'>;
  private readonly expected: Gauge<'source' | 'from'>;
  private readonly values = new Map<string, Gauge<GpuLabel>>();

  constructor(registry: Registry, source: string) {
    this.registry = registry;
    this.source = source;
    this.healthy = gauge(registry, {
      name: 'npd_gpu_healthy',
      help: 'Per GPU: 1 while no check holds a fatal finding on it, 0 while one does.',
      labelNames: ['source', 'gpu', 'uuid', 'pci_bus_id'],
    });
    this.findings = gauge(registry, {
      name: 'npd_gpu_findings',
      help: 'Per GPU and check: the findings the last poll held, by severity (fatal, warning).',
      labelNames: ['source', 'gpu', 'uuid', 'pci_bus_id', 'check', 'severity'],
    });
    this.state = gauge(registry, {
      name: 'npd_gpu_monitor_state',
      help: 'The NVML monitor state: 1 for the current one (running, no_library, no_gpu, nvml_failed).',
      labelNames: ['source', 'state'],
    });
    this.nvmlErrors = counter(registry, {
      name: 'npd_gpu_nvml_errors_total',
      help: 'NVML calls that answered an error other than NOT_SUPPORTED, by call and nvmlReturn_t code.',
      labelNames: ['call', 'code'],
    });
    this.checkErrors = counter(registry, {
      name: 'npd_gpu_check_errors_total',
      help: 'Polls in which a GPU check failed on its own (threw, or NVML answered without what it asked for), per GPU: no NVML error, that check had no verdict.',
      labelNames: ['source', 'check'],
    });
    this.events = counter(registry, {
      name: 'npd_gpu_nvml_events_total',
      help: 'Events NVML delivered through the event wait, by type.',
      labelNames: ['source', 'type'],
    });
    this.unattributed = counter(registry, {
      name: 'npd_gpu_nvml_events_unattributed_total',
      help: 'NVML events whose device handle is none the monitor enumerated: reported without a GPU identity.',
      labelNames: ['source'],
    });
    this.expected = gauge(registry, {
      name: 'npd_gpu_expected_count',
      help: 'The GPU count device-count expects: from=config (expectedCount, --gpu-expected-count), from=node (the Node nvidia.com/gpu capacity; 0 while not known, the comparison skipped).',
      labelNames: ['source', 'from'],
    });
    zeroed(this.events, ...EVENT_KINDS.map((type) => ({ source, type })));
    zeroed(this.unattributed, { source });
    this.setState('no_gpu');
  }

  setState(current: GpuMonitorState): void {
    for (const s of GPU_MONITOR_STATES)
      this.state.set({ source: this.source, state: s }, s === current ? 1 : 0);
  }

  nvmlError(call: string, code: number): void {
    this.nvmlErrors.inc({ call, code: String(code) });
  }

  /** The polled checks the config enabled: their check-error series start at 0. */
  checksEnabled(checks: readonly string[]): void {
    zeroed(this.checkErrors, ...checks.map((check) => ({ source: this.source, check })));
  }

  checkError(check: string): void {
    this.checkErrors.inc({ source: this.source, check });
  }

  event(type: GpuEventKind): void {
    this.events.inc({ source: this.source, type });
  }

  /** What device-count compares NVML with besides the PCI bus; a comparison not configured has no series. */
  expectedCount(from: 'config' | 'node', count: number | undefined): void {
    this.expected.set({ source: this.source, from }, count ?? 0);
  }

  unattributedEvent(): void {
    this.unattributed.inc({ source: this.source });
  }

  /** One poll's verdict for one GPU: health, findings by check and severity, and the checks' values. */
  gpu(
    g: Gpu,
    fatal: boolean,
    counts: ReadonlyMap<string, { fatal: number; warning: number }>,
    values: Readonly<Record<string, number>>,
  ): void {
    const labels = this.labels(g);
    this.healthy.set(labels, fatal ? 0 : 1);
    for (const [check, n] of counts) {
      this.findings.set({ ...labels, check, severity: 'fatal' }, n.fatal);
      this.findings.set({ ...labels, check, severity: 'warning' }, n.warning);
    }
    for (const [name, value] of Object.entries(values)) this.value(name).set(labels, value);
  }

  /** The GPUs are gone (NVML failed or the monitor stopped): their series would claim a stale verdict. */
  forgetGpus(): void {
    this.healthy.reset();
    this.findings.reset();
    for (const g of this.values.values()) g.reset();
  }

  private value(name: string): Gauge<GpuLabel> {
    let g = this.values.get(name);
    if (!g) {
      g = gauge(this.registry, {
        name: `npd_gpu_${name}`,
        help: `Per GPU: ${name.replaceAll('_', ' ')}, as the NVML check that reads it last saw it.`,
        labelNames: ['source', 'gpu', 'uuid', 'pci_bus_id'],
      });
      this.values.set(name, g);
    }
    return g;
  }

  private labels(g: Gpu): Record<GpuLabel, string> {
    return { source: this.source, gpu: String(g.index), uuid: g.uuid, pci_bus_id: kernelBusId(g.busId) };
  }
}
