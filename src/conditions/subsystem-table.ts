import type { LoadedConfig } from '../config/load.ts';
import { reasonMatcher } from '../core/reason-matcher.ts';
import type { HealthTag, Impact, Subsystem } from '../core/types.ts';

/** What a problem means for the node: the subsystem it hurts and how badly. */
export interface Classification {
  readonly subsystem: Subsystem;
  readonly impact: Impact;
}

/** An event's classification, and the condition type that holds its problem where one is named. */
export interface EventClassification extends Classification {
  readonly heldBy?: string | undefined;
}

/** A rule or probe as the table sees it; the three monitor kinds share these fields. */
interface TaggedRule extends HealthTag {
  readonly type: 'temporary' | 'permanent';
  readonly condition?: string | undefined;
  readonly reason: string;
  readonly heldBy?: string | undefined;
}

interface Entry {
  readonly rule: TaggedRule;
  readonly matches: (reason: string) => boolean;
  readonly tag: Classification | undefined;
}

/** Several files may share a source (kernel.yaml and kernel-counter.yaml): their rules add up. */
interface SourceTable {
  /** Per declared condition type, the default of the file that declares it. */
  readonly fallbacks: Map<string, Classification | undefined>;
  readonly entries: Entry[];
}

/** An undeclared impact: a problem is worth a look but not a replacement. */
export const DEFAULT_IMPACT: Impact = 'warning';

/**
 * Which subsystem and impact each reported condition and event has, from the `subsystem` and `impact`
 * fields of the rule files: a rule's own, else its file's. A file without a `subsystem` (NPD's own
 * JSON files) classifies nothing, so it never moves a subsystem condition. Pure and frozen.
 */
export class SubsystemTable {
  private readonly sources: ReadonlyMap<string, SourceTable>;
  /** The subsystems some configured rule or probe watches; only these get a condition. */
  readonly covered: ReadonlySet<Subsystem>;

  private constructor(sources: Map<string, SourceTable>) {
    this.sources = sources;
    const covered = new Set<Subsystem>();
    for (const t of sources.values()) {
      for (const f of t.fallbacks.values()) if (f) covered.add(f.subsystem);
      for (const e of t.entries) if (e.tag) covered.add(e.tag.subsystem);
    }
    this.covered = covered;
  }

  static from(configs: readonly LoadedConfig[]): SubsystemTable {
    const sources = new Map<string, SourceTable>();
    for (const loaded of configs) {
      const c = loaded.config as HealthTag & {
        source?: string;
        conditions?: readonly { type: string }[];
        rules?: readonly TaggedRule[];
        probes?: readonly TaggedRule[];
      };
      if (c.source === undefined) continue;
      const t: SourceTable = sources.get(c.source) ?? { fallbacks: new Map(), entries: [] };
      sources.set(c.source, t);
      for (const d of c.conditions ?? []) t.fallbacks.set(d.type, classify(c, undefined));
      for (const rule of [...(c.rules ?? []), ...(c.probes ?? [])])
        t.entries.push({ rule, matches: reasonMatcher(rule.reason), tag: classify(rule, c) });
    }
    return new SubsystemTable(sources);
  }

  /**
   * A True problem condition: the permanent rule that sets this type with this reason, else any rule
   * that sets this type (a probe's extra reasons), else the default of the file declaring the type.
   */
  condition(source: string, type: string, reason: string): Classification | undefined {
    const t = this.sources.get(source);
    if (!t) return undefined;
    const own = t.entries.filter((e) => e.rule.type === 'permanent' && e.rule.condition === type);
    const exact = own.find((e) => e.matches(reason));
    return (exact ?? own[0])?.tag ?? t.fallbacks.get(type);
  }

  /**
   * An event of a temporary rule. Condition-change events are not counted: the condition itself is,
   * so a problem condition that clears frees its subsystem at once.
   */
  event(source: string, reason: string): EventClassification | undefined {
    const entry = this.sources
      .get(source)
      ?.entries.find((e) => e.rule.type === 'temporary' && e.matches(reason));
    if (!entry?.tag) return undefined;
    return entry.rule.heldBy === undefined ? entry.tag : { ...entry.tag, heldBy: entry.rule.heldBy };
  }
}

function classify(own: HealthTag, file: HealthTag | undefined): Classification | undefined {
  const subsystem = own.subsystem ?? file?.subsystem;
  if (!subsystem) return undefined;
  return { subsystem, impact: own.impact ?? file?.impact ?? DEFAULT_IMPACT };
}
