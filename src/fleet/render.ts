import { humanDuration, oneLine, table } from './format.ts';
import type { RepairDue } from './repair.ts';
import type { NodeReport } from './view.ts';

function repairCell(repairs: readonly RepairDue[], now: number): string {
  if (repairs.length === 0) return '-';
  return repairs
    .map((r) =>
      r.dueAt > now
        ? `${r.consumer} in ${humanDuration(r.dueAt - now)}`
        : `${r.consumer} due ${humanDuration(now - r.dueAt)} ago`,
    )
    .join(', ');
}

const age = (since: number | undefined, now: number) =>
  since === undefined ? '<unknown>' : humanDuration(now - since);

/** The problems of every node that has one: NODE PROBLEM STATUS REASON AGE REPAIR (+ MESSAGE, LAST EVENT). */
export function renderFleet(all: readonly NodeReport[], now: number, wide: boolean): string {
  const rows: string[][] = [];
  for (const r of all) {
    const last = r.events[r.events.length - 1];
    for (const p of r.problems) {
      const row = [r.node, p.type, p.status, p.reason || '-', age(p.since, now), repairCell(p.repairs, now)];
      if (wide)
        row.push(
          oneLine(p.message, 80) || '-',
          last ? `${last.reason} ${humanDuration(now - last.at)} ago` : '-',
        );
      rows.push(row);
    }
  }
  const withProblems = all.filter((r) => r.problems.length > 0).length;
  if (rows.length === 0) return `No problems on ${all.length} nodes.\n`;
  const header = ['NODE', 'PROBLEM', 'STATUS', 'REASON', 'AGE', 'REPAIR'];
  if (wide) header.push('MESSAGE', 'LAST EVENT');
  return `${table(header, rows)}\n${withProblems} of ${all.length} nodes have problems.\n`;
}

/** One node: its conditions' transitions and the agent's events in time order, then the repair clocks. */
export function renderTimeline(r: NodeReport, now: number): string {
  const items: { at: number; cells: string[] }[] = [];
  const problems = new Set(r.problems.map((p) => p.type));
  for (const c of r.conditions) {
    const what = `${c.type}=${c.status}${problems.has(c.type) ? ' (problem)' : ''}`;
    items.push({ at: c.since ?? 0, cells: ['condition', what, oneLine(`${c.reason}: ${c.message}`, 100)] });
  }
  for (const e of r.events) {
    const evidence = e.evidence === undefined ? '' : ` [${e.evidence}]`;
    const what = `${e.type} ${e.reason} (${e.source})${e.count > 1 ? ` x${e.count}` : ''}${evidence}`;
    items.push({ at: e.at, cells: ['event', what, oneLine(e.message, 100)] });
  }
  items.sort((a, b) => a.at - b.at);
  const rows = items.map((i) => [
    i.at ? new Date(i.at).toISOString().replace('.000Z', 'Z') : '<unknown>',
    i.at ? humanDuration(now - i.at) : '-',
    ...i.cells,
  ]);
  const repairs = r.problems
    .filter((p) => p.repairs.length > 0)
    .map((p) => [p.type, p.status, repairCell(p.repairs, now)]);
  const head = `Node ${r.node}: ${r.problems.length === 0 ? 'no problems' : `${r.problems.length} problem(s)`}\n\n`;
  const repairText = repairs.length > 0 ? `\n${table(['PROBLEM', 'STATUS', 'REPAIR'], repairs)}` : '';
  return `${head}${table(['TIME', 'AGE', 'KIND', 'WHAT', 'DETAIL'], rows)}${repairText}`;
}

/** The same reports as JSON, times in RFC 3339, each repair with its seconds left (negative: overdue). */
export function renderJson(all: readonly NodeReport[], now: number): string {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const nodes = all.map((r) => ({
    name: r.node,
    problems: r.problems.map((p) => ({
      type: p.type,
      status: p.status,
      problemWhen: p.problemWhen,
      reason: p.reason,
      message: p.message,
      since: iso(p.since),
      repairs: p.repairs.map((x) => ({
        consumer: x.consumer,
        dueAt: iso(x.dueAt),
        dueInSeconds: Math.round((x.dueAt - now) / 1000),
      })),
    })),
    events: r.events.map((e) => ({ ...e, at: iso(e.at) })),
  }));
  return `${JSON.stringify({ nodes }, null, 2)}\n`;
}
