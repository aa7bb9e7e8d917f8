// A reader that may not open /dev/kmsg (EPERM: a container's device cgroup, or no CAP_SYSLOG under
// kernel.dmesg_restrict=1) says how to fix it: in its health and in one error log line, not in every
// retry. test/container/daemonset.test.ts shows the same in a real runtime.
//   node --import tsx --test test/unit/sources/kmsg/reader-access.test.ts
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { harness } from './harness.ts';

const HINT =
  '/host/dev/kmsg: EPERM: the container needs privileged or the kmsg device; see docs/install.md ' +
  '(outside a container: run as root or with CAP_SYSLOG)';

function capture(): { logger: pino.Logger; records: { level: number; msg: string }[] } {
  const records: { level: number; msg: string }[] = [];
  return { logger: pino({ level: 'trace' }, { write: (l: string) => records.push(JSON.parse(l)) }), records };
}

describe('KmsgReader: a source it may not open', () => {
  it('EPERM: health names the fix, logged once as an error while the retries go on', () => {
    const { logger, records } = capture();
    const h = harness({ path: '/host/dev/kmsg', logger });
    h.device.openErrors.push('EPERM', 'EPERM', 'EPERM');
    const failedAt = h.clock.now();
    h.reader.start();
    assert.deepEqual(h.reader.health(), { up: true, healthy: false, detail: HINT, since: failedAt });
    h.clock.advance(1000);
    h.clock.advance(2000);
    assert.equal(h.device.opened.length, 3, 'still retried with backoff');
    assert.equal(h.reader.health().since, failedAt, 'down since the first failure, not the last retry');
    assert.deepEqual(
      records.filter((r) => r.level === 50).map((r) => r.msg),
      [HINT],
    );
    h.clock.advance(4000);
    assert.deepEqual(h.reader.health(), { up: true, healthy: true }, 'healthy once the open succeeds');
  });

  it('control: other open errors keep the plain errno detail and no hint', () => {
    const { logger, records } = capture();
    const h = harness({ path: '/host/dev/kmsg', logger });
    h.device.openErrors.push('ENOENT');
    h.reader.start();
    assert.deepEqual(h.reader.health(), {
      up: true,
      healthy: false,
      detail: 'open /host/dev/kmsg: ENOENT: fake kmsg device',
      since: h.clock.now(),
    });
    assert.equal(records.filter((r) => r.level === 50).length, 0);
  });
});
