/**
 * The side-by-side table of `npm run bench -- vs-npd`: one markdown row per figure, NPD's value, this
 * agent's, their ratio and the load average while it was taken. Pure, so it is unit tested.
 */

export interface Row {
  readonly label: string;
  /** One value per sub-measure (e.g. per flood rate); NaN when not measured. */
  readonly npd: readonly number[];
  readonly ours: readonly number[];
  readonly format: (v: number) => string;
  readonly npdNote?: string;
  readonly oursNote?: string;
  readonly load: string;
}

/** this agent / NPD, e.g. "0.03x", "1.9x", "31x"; "n/a" when either side is missing or NPD's is 0. */
export function formatRatio(npd: number, ours: number): string {
  if (!Number.isFinite(npd) || !Number.isFinite(ours) || npd === 0) return 'n/a';
  const r = ours / npd;
  if (r >= 10) return `${r.toFixed(0)}x`;
  if (r >= 1) return `${r.toFixed(1)}x`;
  if (r >= 0.1) return `${r.toFixed(2)}x`;
  return `${r.toPrecision(2)}x`;
}

function cell(values: readonly number[], format: (v: number) => string, note?: string): string {
  const text = values.map((v) => (Number.isFinite(v) ? format(v) : 'not measured')).join(' / ');
  return note ? `${text} (${note})` : text;
}

/** Markdown-safe: a `|` inside a cell would split it. */
function escapePipes(text: string): string {
  return text.replaceAll('|', '\\|');
}

export function renderTable(rows: readonly Row[]): string {
  const lines = ['| | NPD v1.36.0 | this agent | this agent / NPD | load |', '|---|---|---|---|---|'];
  for (const r of rows) {
    const ratios = r.npd.map((n, i) => formatRatio(n, r.ours[i] ?? Number.NaN)).join(' / ');
    const cells = [
      r.label,
      cell(r.npd, r.format, r.npdNote),
      cell(r.ours, r.format, r.oursNote),
      ratios,
      r.load,
    ];
    lines.push(`| ${cells.map(escapePipes).join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The median of a sample (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** A per-cent figure with one decimal, or more when it is small: "100%", "99.1%", "0.05%". */
export function percent(fraction: number): string {
  const p = fraction * 100;
  if (p === 100 || p === 0) return `${p}%`;
  return p >= 1 ? `${p.toFixed(1)}%` : `${p.toPrecision(2)}%`;
}
