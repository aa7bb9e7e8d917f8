/**
 * Issue 38 item 3 as it happens: `logger` run as uid 65534 writes the shipped rules' problem lines
 * under their identifiers (SYSLOG_IDENTIFIER=smartd, systemd) into a real systemd-journald, read by
 * the real journalctl through the journald source and the shipped smartd.yaml and systemd.yaml. No
 * condition and no event; npd_log_lines_untrusted_total counts each. Control: the same text from the
 * trusted writer (root in smartd.service; root in init.scope, PID 1's unit) still raises them.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfigs } from '../../../../src/config/load.ts';
import { systemClock } from '../../../../src/core/clock.ts';
import type { Status } from '../../../../src/core/types.ts';
import { SystemLogMonitor } from '../../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';
import { createJournaldSource } from '../../../../src/sources/journald/source.ts';
import { seriesValue } from '../../../support/fake-node.ts';
import { TestJournal, testJournalUnavailable } from '../../../support/journald.ts';
import { makeDeps, tempDir, waitFor } from '../harness.ts';

const RULES = fileURLToPath(new URL('../../../../rules/', import.meta.url));

async function startedJournal(t: TestContext): Promise<TestJournal> {
  const journal = new TestJournal(tempDir(t));
  t.after(async () => {
    await journal.stop();
    journal.cleanup();
  });
  await journal.start();
  return journal;
}

/** A shipped rule file's monitor over the real journal (the host's /var/log/journal, as the pod reads it). */
async function shippedMonitor(t: TestContext, file: string) {
  const [loaded] = loadConfigs([{ file: `${RULES}${file}` }], [systemLogConfigKind]);
  const config = loaded?.config as LogMonitorConfig;
  const deps = makeDeps(systemClock, '/');
  const monitor = new SystemLogMonitor(config, createJournaldSource(config, deps), deps);
  t.after(() => monitor.stop());
  const statuses: Status[] = [];
  await monitor.start((s) => statuses.push(s));
  return {
    events: (text: string) => statuses.flatMap((s) => s.events).filter((e) => e.message.includes(text)),
    condition: (type: string) => statuses.at(-1)?.conditions.find((c) => c.type === type),
    untrusted: async (rule: string) =>
      (await seriesValue(deps.registry, 'npd_log_lines_untrusted_total', { source: config.source, rule })) ??
      0,
  };
}

it('logger as uid 65534 into a real journald: no condition, no event, counted; the trusted writer still raises them', {
  skip: testJournalUnavailable() ?? false,
  timeout: 120_000,
}, async (t) => {
  const journal = await startedJournal(t);
  const id = randomBytes(4).toString('hex');
  const smart = `Device: /dev/sd${id} [SAT], FAILED SMART self-check. BACK UP DATA NOW!`;
  const failed = `Failed to start containerd.service - containerd container runtime ${id}.`;
  const smartd = await shippedMonitor(t, 'smartd.yaml');
  const systemd = await shippedMonitor(t, 'systemd.yaml');

  await journal.writeAs(65534, 'smartd', smart);
  await journal.writeAs(65534, 'systemd', failed, true);
  // At least one: the monitors read the whole host journal, where another run's forged line may be.
  await waitFor(
    async () => (await smartd.untrusted('SMARTSelfCheckFailed')) >= 1,
    30_000,
    'the forged SMART line',
  );
  await waitFor(
    async () => (await systemd.untrusted('ContainerdStartFailed')) >= 1,
    30_000,
    'the forged systemd line',
  );
  const refused = await smartd.untrusted('SMARTSelfCheckFailed');
  assert.equal(smartd.condition('DiskSMARTFailure')?.status, 'False');
  assert.deepEqual(smartd.events(id), []);
  assert.deepEqual(systemd.events(id), []);

  await journal.write('smartd.service', 'smartd', [smart]);
  await journal.write('init.scope', 'systemd', [failed]);
  await waitFor(() => smartd.condition('DiskSMARTFailure')?.status === 'True', 30_000, 'DiskSMARTFailure');
  await waitFor(() => systemd.events(id).length === 1, 30_000, 'the ContainerdStartFailed event');
  assert.equal(systemd.events(id)[0]?.reason, 'ContainerdStartFailed');
  assert.equal(smartd.condition('DiskSMARTFailure')?.reason, 'SMARTSelfCheckFailed');
  assert.equal(await smartd.untrusted('SMARTSelfCheckFailed'), refused, 'the trusted line was not counted');
});
