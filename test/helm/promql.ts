// Reading the dashboard's and alerts' PromQL, and the agent's /metrics text, for the query tests:
// which metric names an expression selects, which metric families a scrape declares, and the scraped
// samples as `promtool test rules` input series.

/** PromQL words that look like metric names but are operators or modifiers. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
  'atan2',
  'start',
  'end',
]);

/**
 * The metric names an expression selects. Strings, label matchers, ranges and grouping clauses are cut
 * out first; of the identifiers left, a function call is followed by "(" and a keyword is known.
 */
export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of s.matchAll(/(?<![\w.:])[a-zA-Z_:][\w:]*/g)) {
    const rest = s.slice(m.index + m[0].length);
    if (/^\s*\(/.test(rest) || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

export interface Scrape {
  /** Families the agent declares (# TYPE), with the _bucket/_sum/_count series of histograms. */
  readonly families: ReadonlySet<string>;
  /** series (name{labels}) -> value */
  readonly samples: ReadonlyMap<string, string>;
}

/** Parses Prometheus text exposition (what prom-client serves). */
export function parseExposition(text: string): Scrape {
  const families = new Set<string>();
  const samples = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type?.[1]) {
      families.add(type[1]);
      if (type[2] === 'histogram' || type[2] === 'summary') {
        for (const suffix of ['_bucket', '_sum', '_count']) families.add(type[1] + suffix);
      }
      continue;
    }
    if (!line.trim() || line.startsWith('#')) continue;
    // name{labels} value [timestamp]; label values may hold spaces and escaped quotes.
    const m = /^([a-zA-Z_:][\w:]*)(\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?\s+(\S+)/.exec(line);
    if (!m?.[1] || !m[3]) throw new Error(`unparsable exposition line: ${line}`);
    samples.set(`${m[1]}${m[2] ?? ''}`, m[3]);
  }
  return { families, samples };
}

/** Adds labels to a `name{...}` series key (as the ServiceMonitor's relabeling adds job and node). */
export function withLabels(series: string, labels: Record<string, string>): string {
  const extra = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const m = /^([^{]+)(?:\{(.*)\})?$/.exec(series);
  if (!m?.[1]) throw new Error(`bad series ${series}`);
  const inner = [m[2], ...extra].filter((x) => x).join(',');
  return `${m[1]}{${inner}}`;
}

/** promtool's values notation for one sample (its lexer reads NaN, +Inf and -Inf as such). */
const promtoolValue = (v: string): string => (v === '+Inf' ? 'Inf' : v);

/** Input series for `promtool test rules`: one value per scrape, `interval` apart. */
export function inputSeries(
  scrapes: readonly Scrape[],
  labels: Record<string, string>,
): { series: string; values: string }[] {
  const keys = new Set(scrapes.flatMap((s) => [...s.samples.keys()]));
  return [...keys].sort().map((k) => ({
    series: withLabels(k, labels),
    values: scrapes.map((s) => (s.samples.has(k) ? promtoolValue(s.samples.get(k)!) : '_')).join(' '),
  }));
}

export interface Query {
  readonly where: string;
  readonly expr: string;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every PromQL expression of a Grafana dashboard: panel targets and query variables. */
export function dashboardQueries(dashboard: {
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: string | { query: string } }[] };
}): Query[] {
  const out: Query[] = [];
  const walk = (panels: Panel[]) => {
    for (const p of panels) {
      for (const [i, t] of (p.targets ?? []).entries()) {
        if (t.expr) out.push({ where: `panel "${p.title}" target ${i}`, expr: t.expr });
      }
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
    const q = typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
    // label_values(<series selector>, <label>): the selector is PromQL; Grafana runs it as a series query.
    const m = /^label_values\((.+),\s*\w+\)$/.exec(q);
    out.push({ where: `variable $${v.name}`, expr: m?.[1] ?? q });
  }
  return out;
}

/** Grafana's variables, replaced by what Grafana would send for a 1-minute scrape interval. */
export const GRAFANA_VARS: Record<string, string> = {
  $__rate_interval: '2m',
  $__range: '5m',
  $node: '.*',
  $cluster: '.*',
  // $job's "All" has no custom value, so Grafana sends the values it found: the agent's job only.
  $job: 'node-problem-detector',
};

export function substituteGrafanaVars(expr: string): string {
  let out = expr;
  for (const [k, v] of Object.entries(GRAFANA_VARS)) out = out.split(k).join(v);
  if (out.includes('$')) throw new Error(`unknown Grafana variable in: ${expr}`);
  return out;
}
