import type { Logger } from '../core/logger.ts';
import type { Condition } from '../core/types.ts';

export interface StartupFacts {
  readonly version: string;
  readonly mode: string;
  readonly node: string;
  readonly monitors: readonly string[];
  readonly conditions: Iterable<Condition>;
  /** Where each kmsg reader starts ("<source>: <where>"), so a replayed or skipped backlog is no surprise. */
  readonly kmsg: readonly string[];
  readonly listen: readonly { readonly name: string; readonly address: string; readonly port: number }[];
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
    },
    problems.length === 0
      ? `agent started: ${count}, none True`
      : `agent started: ${count}, ${problems.length} True: ${problems.join(', ')}`,
  );
}
