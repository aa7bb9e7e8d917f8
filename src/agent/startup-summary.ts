import type { Logger } from '../core/logger.ts';
import type { Condition } from '../core/types.ts';
import type { Monitor } from '../monitors/monitor.ts';

export interface StartupFacts {
  readonly version: string;
  readonly mode: string;
  readonly node: string;
  readonly monitors: readonly string[];
  readonly conditions: Iterable<Condition>;
  /** Where each kmsg reader starts ("<source>: <where>"), so a replayed or skipped backlog is no surprise. */
  readonly kmsg: readonly string[];
  readonly listen: readonly { readonly name: string; readonly address: string; readonly port: number }[];
  /**
   * Monitors with nothing to watch on this node, and why ("<source>: <why>"): a GPU monitor without
   * NVML or a GPU, a journal monitor without a journal. Said here once; they report no condition.
   */
  readonly waiting?: readonly string[];
}

/** The "<source>: <why>" of each monitor whose health says it waits for an input this node lacks. */
export function waitingMonitors(monitors: readonly Monitor[]): string[] {
  return monitors.flatMap((m) => {
    const h = m.health();
    return h.waiting ? [`${m.source}: ${h.detail ?? 'waiting'}`] : [];
  });
}

/**
 * The first screen: one line that says what runs and what is wrong, instead of a line per healthy
 * condition burying the one that matters. Conditions are logged again only when they change.
 */
export function logStartupSummary(logger: Logger, f: StartupFacts): void {
  const all = [...f.conditions];
  const count = `${all.length} ${all.length === 1 ? 'condition' : 'conditions'}`;
  const problems = all.filter((c) => c.status === 'True').map((c) => `${c.type}(${c.reason})`);
  const listen = f.listen
    .filter((l) => l.port > 0)
    .map((l) => `${l.name}=${l.address === '' ? '0.0.0.0' : l.address}:${l.port}`);
  logger.info(
    {
      version: f.version,
      mode: f.mode,
      node: f.node,
      monitors: f.monitors,
      conditions: all.length,
      problems,
      kmsg: f.kmsg,
      listen,
      ...(f.waiting && f.waiting.length > 0 ? { waiting: f.waiting } : {}),
    },
    `${problems.length === 0 ? `agent started: ${count}, none True` : `agent started: ${count}, ${problems.length} True: ${problems.join(', ')}`}${waitingText(f.waiting)}`,
  );
}

function waitingText(waiting: readonly string[] | undefined): string {
  return waiting && waiting.length > 0 ? `; nothing to watch: ${waiting.join('; ')}` : '';
}
