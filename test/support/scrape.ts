/** Prometheus text exposition, read the way a scrape stores it: families with their type and samples. */
export interface Family {
  readonly name: string;
  readonly type: string;
  readonly samples: { readonly series: string; readonly value: number }[];
}

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const owner = (metric: string): Family | undefined =>
    families.get(metric) ?? families.get(metric.replace(/_(bucket|sum|count)$/, ''));
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type)
      families.set(type[1] as string, { name: type[1] as string, type: type[2] as string, samples: [] });
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    owner(m[1] as string)?.samples.push({ series: `${m[1]}${m[2] ?? ''}`, value: Number(m[3]) });
  }
  return families;
}
