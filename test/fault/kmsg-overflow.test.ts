// The kernel ring buffer overwrites records the agent has not read yet (its next read() fails with
// EPIPE): end to end on the real /dev/kmsg. The agent polls every 200 ms; a burst far bigger than the
// 128 KiB ring (here ~1 MB) written between two polls guarantees the overwrite. The agent keeps
// reading, counts every overwritten record, and still reports a problem logged after the burst.
// test/unit/sources/kmsg/reader-failures.test.ts covers the same path against a fake device.
// NOTE: this overwrites the kernel log for everyone on the machine; do not run it beside other e2e tests.
import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import { test } from 'node:test';
import { lastKmsgSeq } from '../bench/kmsg-seq.ts';
import {
  eventsOf,
  faultSuite,
  healthz,
  kmsg,
  markedNames,
  metricOf,
  scrape,
  sum,
  temporaryRule,
  untilEvent,
  waitFor,
  writeMonitor,
} from './support.ts';

const { id, source } = markedNames('epipe');
const FLOOD = 5000;

const s = faultSuite({
  configs: (dir) => [
    writeMonitor(dir, 'epipe.yaml', {
      plugin: 'kmsg',
      source,
      rules: [temporaryRule('AfterFlood', `${id}: problem after the flood`)],
    }),
  ],
});

/** ~200-byte lines as fast as possible; 10 per open, the per-open rate limit's burst. */
function flood(): void {
  const line = Buffer.from(`<6>${id}: flood ${'x'.repeat(200)}\n`);
  for (let i = 0; i < FLOOD; i += 10) {
    const fd = openSync('/dev/kmsg', 'w');
    for (let k = 0; k < 10; k++) writeSync(fd, line);
    closeSync(fd);
  }
}

const counted = async () => {
  const m = await scrape(s.agent.metricsUrl);
  const mine = `source="${source}"`;
  return {
    read: sum(m, 'npd_log_lines_read_total', mine),
    lost: sum(m, 'npd_kmsg_records_lost_total', mine),
    restarts: sum(m, 'npd_monitor_restarts_total', mine),
  };
};

/**
 * The kernel's newest sequence number and the agent's counters at a moment when nothing new was logged
 * for a second (longer than the agent's poll interval), so the agent has read exactly up to it.
 */
async function quiescent(): Promise<{ seq: number; read: number; lost: number; restarts: number }> {
  let out: { seq: number; read: number; lost: number; restarts: number } | undefined;
  await waitFor(async () => {
    const seq = lastKmsgSeq();
    await new Promise((r) => setTimeout(r, 1000));
    const c = await counted();
    if (lastKmsgSeq() !== seq) return false;
    out = { seq, ...c };
    return true;
  }, 60_000);
  return out as { seq: number; read: number; lost: number; restarts: number };
}

test('records overwritten before they are read are counted, and reading carries on', {
  timeout: 180_000,
}, async (t) => {
  const { cp, agent } = s;
  const before = await quiescent();
  flood();
  kmsg(`${id}: problem after the flood`);
  await untilEvent(s, source, 'AfterFlood');
  const after = await quiescent();
  const lost = after.lost - before.lost;
  const read = after.read - before.read;
  t.diagnostic(`burst ${FLOOD}: read ${read}, lost ${lost}, kernel span ${after.seq - before.seq}`);
  assert.ok(lost > 0, `the ring overflowed between two polls (lost ${lost}, read ${read})`);
  assert.ok(read + lost >= FLOOD + 1, 'every record of the burst was read or counted as lost');
  assert.equal(read + lost, after.seq - before.seq, "read + lost == the kernel's sequence-number span");
  assert.equal(after.restarts, before.restarts, 'EPIPE is not a reader failure');
  assert.equal(await metricOf(agent, 'problem_counter', 'reason="AfterFlood"'), 1);
  assert.equal(await healthz(agent), 200);
  const events = await eventsOf(cp, source);
  assert.equal(events[0]?.involvedObject.uid, cp.nodeUid);
  assert.equal(agent.child.exitCode, null);
});
