/**
 * Proof 6: the agent pod under the kubelet's cgroups (the shipped requests and limits) through a kernel
 * log flood and an event storm. Returns the figures; the test asserts only what cannot flake (no OOM
 * kill, no restart, /healthz answering, losses counted rather than silent), `npm run bench -- node`
 * prints them.
 */
import { runWriter, type WriterSummary } from '../bench/kmsg-writer.ts';
import { marker } from '../e2e/support.ts';
import type { AgentPod } from './support.ts';

export interface LoadFigures {
  flood: WriterSummary;
  storm: WriterSummary;
  recordsLost: number;
  eventsWritten: number;
  eventsDropped: number;
  eventsSpamFiltered: number;
  healthz: number[];
}

async function sample(pod: AgentPod, name: string): Promise<number> {
  const text = await (await fetch(`http://${pod.podIP}:20257/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Polls /healthz every second while `work` runs; returns the status codes seen. */
async function healthzDuring(pod: AgentPod, work: Promise<unknown>): Promise<number[]> {
  const codes: number[] = [];
  let done = false;
  void work.finally(() => {
    done = true;
  });
  while (!done) {
    const code = await fetch(`http://${pod.podIP}:20256/healthz`, { signal: AbortSignal.timeout(5000) })
      .then((r) => r.status)
      .catch(() => 0);
    codes.push(code);
    await new Promise((r) => setTimeout(r, 1000));
  }
  return codes;
}

export async function loadPod(
  pod: AgentPod,
  o: { rate: number; seconds: number; storm: number },
): Promise<LoadFigures> {
  const before = {
    lost: await sample(pod, 'npd_kmsg_records_lost_total'),
    written: await sample(pod, 'npd_events_written_total'),
    dropped: await sample(pod, 'npd_events_dropped_total'),
    spam: await sample(pod, 'npd_events_spam_filtered_total'),
  };
  const m = marker('npdld');
  const work = (async () => {
    const flood = await runWriter({ rate: o.rate, seconds: o.seconds, marks: 0 }, m);
    const storm = await runWriter(
      { rate: 0, seconds: 20, marks: o.storm, shape: 'oom-kill' },
      m.slice(0, 15),
    );
    await new Promise((r) => setTimeout(r, 15_000));
    return { flood, storm };
  })();
  const healthz = await healthzDuring(pod, work);
  const { flood, storm } = await work;
  return {
    flood,
    storm,
    recordsLost: (await sample(pod, 'npd_kmsg_records_lost_total')) - before.lost,
    eventsWritten: (await sample(pod, 'npd_events_written_total')) - before.written,
    eventsDropped: (await sample(pod, 'npd_events_dropped_total')) - before.dropped,
    eventsSpamFiltered: (await sample(pod, 'npd_events_spam_filtered_total')) - before.spam,
    healthz,
  };
}

export function formatLoad(f: LoadFigures): string {
  const bad = f.healthz.filter((c) => c !== 200).length;
  return [
    `flood: ${f.flood.written} lines in ${f.flood.seconds.toFixed(1)} s = ${f.flood.achievedRate.toFixed(0)} lines/s`,
    `storm: ${f.storm.written} distinct OOM-kill lines`,
    `kmsg records lost (counted): ${f.recordsLost}`,
    `events written ${f.eventsWritten}, spam-filtered ${f.eventsSpamFiltered}, dropped ${f.eventsDropped} (all counted)`,
    `/healthz: ${f.healthz.length - bad}/${f.healthz.length} answered 200`,
  ].join('\n');
}
