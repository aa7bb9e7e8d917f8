/**
 * What the process_* metrics cost: CPU per scrape of a registry holding only them (they read
 * /proc/self/status, /proc/self/fd and /proc/self/limits when scraped), against an empty registry.
 * Nothing of theirs runs between scrapes, so an idle agent pays this once per scrape interval.
 */
import { createRegistry } from '../../src/core/metrics.ts';
import { registerProcessMetrics } from '../../src/metrics/process-metrics.ts';
import { loadNote } from './proc.ts';

async function microsPerScrape(withProcess: boolean, scrapes: number): Promise<number> {
  const registry = createRegistry();
  if (withProcess) registerProcessMetrics(registry);
  await registry.metrics();
  const start = process.cpuUsage();
  for (let i = 0; i < scrapes; i++) await registry.metrics();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / scrapes;
}

export async function processMetricsBench(opts: { readonly scrapes: number }): Promise<void> {
  const empty = await microsPerScrape(false, opts.scrapes);
  const full = await microsPerScrape(true, opts.scrapes);
  const extra = full - empty;
  console.log(`## process_* metrics (${opts.scrapes} scrapes each, ${loadNote()})`);
  console.log(
    `  empty registry: ${empty.toFixed(1)} us/scrape; with process_*: ${full.toFixed(1)} us/scrape`,
  );
  for (const interval of [15, 60]) {
    const millicores = (extra / 1e6 / interval) * 1000;
    console.log(`  scraped every ${interval} s: ${millicores.toFixed(4)} millicores`);
  }
}
