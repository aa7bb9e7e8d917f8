import type { Counter, Registry } from 'prom-client';
import { counter } from '../../core/metrics.ts';
import type { LogLine, XidOccurrence } from '../../core/types.ts';
import type { LogPlugin, LogRuleConfig } from '../../rules/config.ts';
import type { NamedOccurrence, OccurrenceReader } from '../../rules/evidence.ts';
import { QuotedText } from '../../rules/untrusted.ts';
import { quotedClassifier } from './quoted-matches.ts';

/** "%04x:%02x:%02x": the domain has four digits or more (above 0xffff: VMD domains, some hypervisors). */
const BUS = '[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}';

/**
 * An Xid report, as NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c
 * krcReportXid_IMPL() prints it: "NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, %s", on a MIG
 * GPU with " GPU-I:%02u" (and " GPU-CI:%02u") after the address. Older drivers print no pid or name,
 * and NVIDIA's Xid errors document shows the oldest form without "PCI:" (`NVRM: Xid (0000:03:00): 14,
 * Channel 00000001`). Anchored at the start of the record, and the code comes before the process name.
 */
const XID_LINE = new RegExp(
  String.raw`^NVRM: Xid \((?:PCI:)?(${BUS})(?: GPU-I:\d+)?(?: GPU-CI:\d+)?\): (\d+)\b`,
);

/**
 * The GPU's identity, which kernel_rc.c _krcLogUuidOnce() prints once before the GPU's first Xid:
 * "NVRM: GPU at PCI:%04x:%02x:%02x: %s" with the UUID (real, H200: `NVRM: GPU at PCI:0000:00:06:
 * GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3`; NVIDIA's Xid errors document shows the old form
 * `NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7`). The whole record must be this.
 */
const GPU_IDENTITY = new RegExp(
  String.raw`^NVRM: GPU at (?:PCI:)?(${BUS}): (GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})\s*$`,
);

/** A node has a few GPUs; a bound all the same, so no stream of identity lines grows the map. */
const MAX_GPUS = 256;

/** The Xid code and the GPU's bus id ("dddd:bb:dd", lower case) of an Xid record's text. */
export function parseXid(text: string): { readonly code: number; readonly busId: string } | undefined {
  const m = XID_LINE.exec(text);
  if (!m) return undefined;
  return { code: Number(m[2]), busId: (m[1] as string).toLowerCase() };
}

/** The bus id and UUID of the driver's identity record. */
export function parseGpuIdentity(
  text: string,
): { readonly busId: string; readonly uuid: string } | undefined {
  const m = GPU_IDENTITY.exec(text);
  return m ? { busId: (m[1] as string).toLowerCase(), uuid: m[2] as string } : undefined;
}

/**
 * The Xid occurrences of one log monitor's matches (rules marked `occurrence: xid`), each with the UUID
 * of its GPU once the monitor has read that GPU's identity record: the driver names the UUID once per
 * boot, later Xids only the bus id. The text parsed is what the line's writer quotes from user space
 * masked out (rules/untrusted.ts, whatever --trust-quoted-text says), so no process name, whatever it
 * imitates, makes or names an occurrence.
 */
export class XidOccurrences implements OccurrenceReader {
  private readonly source: string;
  private readonly text: QuotedText;
  private readonly registry: Registry;
  private readonly uuids = new Map<string, string>();
  /** Created once the rules have a marked rule: a monitor without one exports no such series. */
  private unparsed: Counter<'source' | 'rule'> | undefined;
  /** Whether the rules have a marked rule: only then are identity records looked for. */
  private marked = false;

  constructor(source: string, plugin: LogPlugin, registry: Registry) {
    this.source = source;
    this.registry = registry;
    this.text = new QuotedText(quotedClassifier(plugin, false));
  }

  /** The monitor's rules, at start and after a reload: each marked rule's unparsed series starts at 0. */
  declare(rules: readonly LogRuleConfig[]): void {
    const marked = rules.filter((r) => r.occurrence === 'xid');
    this.marked = marked.length > 0;
    if (this.marked) this.unparsed ??= unparsedCounter(this.registry);
    for (const r of marked) this.unparsed?.inc({ source: this.source, rule: r.reason }, 0);
  }

  /** Learns the UUIDs the driver's identity records among `lines` name (no rule makes them an event). */
  observe(lines: readonly LogLine[]): void {
    if (!this.marked) return;
    for (const line of lines) {
      if (!line.message.startsWith('NVRM: GPU at ')) continue;
      const id = parseGpuIdentity(this.text.trusted(line));
      if (id && (this.uuids.size < MAX_GPUS || this.uuids.has(id.busId))) this.uuids.set(id.busId, id.uuid);
    }
  }

  /**
   * The Xid a marked rule's match reports, and the note naming its GPU's UUID when known; a line whose
   * start is no Xid report counts in npd_gpu_xid_unparsed_total, and its event passes without one.
   */
  of(rule: LogRuleConfig, lines: readonly LogLine[]): NamedOccurrence | undefined {
    // The newest line is the one the rule matched (the Xid rules are single-line).
    const line = lines[lines.length - 1];
    const xid = line && parseXid(this.text.trusted(line));
    if (!xid) {
      this.unparsed?.inc({ source: this.source, rule: rule.reason });
      return undefined;
    }
    const uuid = this.uuids.get(xid.busId);
    const occurrence: XidOccurrence = { kind: 'xid', ...xid, ...(uuid ? { uuid } : {}) };
    return uuid ? { occurrence, note: `uuid=${uuid}` } : { occurrence };
  }
}

function unparsedCounter(registry: Registry): Counter<'source' | 'rule'> {
  return counter(registry, {
    name: 'npd_gpu_xid_unparsed_total',
    help: 'Matches of a rule marked occurrence: xid whose Xid code and GPU could not be read; their events pass unmerged and uncounted by npd_gpu_xid_total.',
    labelNames: ['source', 'rule'],
  });
}
