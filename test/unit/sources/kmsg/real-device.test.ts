import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readdirSync, writeFileSync } from 'node:fs';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { LogLine } from '../../../../src/core/types.ts';
import { nodeKmsgDevice } from '../../../../src/host/clib/kmsg-snapshot.ts';
import { KmsgReader } from '../../../../src/sources/kmsg/reader.ts';

const DEVICE = '/dev/kmsg';

/** Reading needs CAP_SYSLOG where dmesg_restrict=1, writing needs root: probe instead of guessing. */
function unusableReason(): string | undefined {
  try {
    closeSync(openSync(DEVICE, constants.O_RDONLY | constants.O_NONBLOCK));
    closeSync(openSync(DEVICE, constants.O_WRONLY));
    return undefined;
  } catch (err) {
    return `${DEVICE} not readable and writable here: ${(err as Error).message}`;
  }
}

async function waitFor(
  lines: readonly LogLine[],
  text: string,
  timeoutMs: number,
): Promise<LogLine | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = lines.find((l) => l.message === text);
    if (hit || Date.now() >= deadline) return hit;
    await sleep(25);
  }
}

it('delivers records written to the real /dev/kmsg, from the backlog and live', async (t) => {
  const reason = unusableReason();
  if (reason) {
    t.skip(reason);
    return;
  }
  const id = randomBytes(6).toString('hex');
  const backlogText = `npd-test: marker-${id}-backlog`;
  const liveText = `npd-test: marker-${id}-live`;
  const lines: LogLine[] = [];
  const reader = new KmsgReader({
    clock: systemClock,
    registry: createRegistry(),
    logger: silentLogger(),
    lookbackMs: 60_000,
    pollIntervalMs: 20,
    onLines: (batch) => lines.push(...batch),
  });
  t.after(() => reader.stop());
  // Each write opens the device anew, which sidesteps the per-open userspace rate limit.
  writeFileSync(DEVICE, `<3>${backlogText}\n`);
  const before = Date.now();
  reader.start();
  const fromBacklog = await waitFor(lines, backlogText, 5000);
  assert.ok(fromBacklog, 'the record written before start came from the backlog');
  writeFileSync(DEVICE, `<3>${liveText}\n`);
  const live = await waitFor(lines, liveText, 5000);
  assert.ok(live, 'the record written after start was delivered');
  assert.deepEqual(reader.health(), { up: true, healthy: true });
  // Wall time comes from /proc/uptime, which drifts from the kmsg clock only by suspend time.
  assert.ok(Math.abs(live.timestamp - before) < 60_000, `timestamp ${live.timestamp} near ${before}`);
  assert.equal(lines.filter((l) => l.message.includes(id)).length, 2, 'each marker exactly once');
});

const openFds = () => readdirSync('/proc/self/fd').length;

/** The open fd count once it has not changed for 200 ms (at most 3 s): pipes close asynchronously. */
async function settledFds(): Promise<number> {
  let last = openFds();
  for (let stable = 0, start = Date.now(); stable < 10 && Date.now() - start < 3000; ) {
    await sleep(20);
    const now = openFds();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  return last;
}

it('poll(2) on the real device wakes for a new record, and a cancelled wait never calls back', async (t) => {
  const reason = unusableReason();
  if (reason) {
    t.skip(reason);
    return;
  }
  const { waitReadable, openSync: open, readSync, closeSync: close } = nodeKmsgDevice();
  assert.ok(waitReadable);
  const fd = open(DEVICE, constants.O_RDONLY | constants.O_NONBLOCK);
  const buf = Buffer.alloc(64 * 1024);
  const drain = () => {
    for (;;) {
      try {
        readSync(fd, buf);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EPIPE') return;
      }
    }
  };
  drain();
  let cancelledCalls = 0;
  const cancel = waitReadable(fd, () => cancelledCalls++);
  assert.ok(cancel);
  cancel();
  // The cancelled poll returns and its callback closes the wake pipe, later on a loaded machine:
  // counted once the count has settled, after the first wait (loading koffi and starting the libuv
  // pool open fds of their own).
  const fdsBefore = await settledFds();
  drain();
  let woke = false;
  assert.ok(waitReadable(fd, () => (woke = true)));
  assert.equal(woke, false, 'the wait does not call back before poll(2) returns');
  writeFileSync(DEVICE, `<3>npd-test: marker-${randomBytes(6).toString('hex')}-poll\n`);
  const deadline = Date.now() + 5000;
  while (!woke && Date.now() < deadline) await sleep(10);
  assert.ok(woke, 'poll(2) returned for the new record');
  close(fd);
  assert.equal(cancelledCalls, 0);
  assert.equal(await settledFds(), fdsBefore - 1, 'the wake pipes are closed');
});
