/**
 * Issue 38, evidence levels for log files (docs/rules.md, "Who wrote a log file line"): a filelog
 * config records no writer, so its lines are no evidence. The loader refuses a YAML config whose rule
 * asks for more than an info event, naming the file and the rule; `trustedWriter: any` (the control)
 * and the same rules on kmsg or journald load. NPD's JSON filelog configs load, and a real line
 * appended to a followed file raises nothing and counts, or, with --trust-file-writers, what NPD raises.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createLogger } from '../../../src/core/logger.ts';
import type { Condition, ProblemEvent } from '../../../src/core/types.ts';
import { fixedZone } from '../../../src/gocompat/time.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import { systemLogMonitorType } from '../../../src/monitors/system-log/type.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import { createFilelogSource } from '../../../src/sources/filelog/source.ts';
import { stringify } from 'yaml';
import { loadErrors, loadOne, NPD_DIR } from '../config/helpers.ts';
import { HOUR, makeDeps, metric, tempDir } from '../sources/harness.ts';

const FILELOG = {
  plugin: 'filelog',
  logPath: '/var/log/app.log',
  source: 'app-monitor',
  pluginConfig: { timestamp: '^(\\S+)', message: '^\\S+ (.*)', timestampFormat: '2006-01-02T15:04:05Z07:00' },
};
const RULES = {
  conditions: [{ type: 'AppBroken', reason: 'AppFine', message: 'app is fine' }],
  rules: [
    { type: 'temporary', reason: 'AppNote', pattern: 'note', impact: 'info' },
    { type: 'temporary', reason: 'AppWarn', pattern: 'warn' },
    { type: 'temporary', reason: 'AppStorm', pattern: 'storm', impact: 'info', count: 3, window: '1m' },
    { type: 'permanent', condition: 'AppBroken', reason: 'AppDown', pattern: 'down' },
  ],
};

describe('the loader: a filelog rule that asks for more than an info event', () => {
  it('is refused in YAML, each rule named with the file and its index', () => {
    const issues = loadErrors({ 'app.yaml': stringify({ ...FILELOG, ...RULES }) });
    assert.deepEqual(
      issues.map((i) => [i.file, i.path]),
      [
        ['app.yaml', 'rules[1]'],
        ['app.yaml', 'rules[2]'],
        ['app.yaml', 'rules[3]'],
      ],
    );
    assert.match(
      issues[0]?.message ?? '',
      /^rule AppWarn has impact warning, but a log file records no writer/,
    );
    assert.match(issues[1]?.message ?? '', /^rule AppStorm counts lines towards a frequency window/);
    assert.match(issues[2]?.message ?? '', /^rule AppDown raises condition AppBroken, .*trustedWriter: any/);
  });

  it('a file impact of fatal is the rule impact', () => {
    const rules = [{ type: 'temporary', reason: 'AppNote', pattern: 'note' }];
    const issues = loadErrors({ 'app.yml': stringify({ ...FILELOG, impact: 'fatal', rules }) });
    assert.deepEqual(
      issues.map((i) => [i.path, i.message.slice(0, 35)]),
      [['rules[0]', 'rule AppNote has impact fatal, but ']],
    );
  });

  it('control: the same file with trustedWriter: any loads, every line evidence', () => {
    const config = loadOne('app.yaml', stringify({ ...FILELOG, ...RULES, trustedWriter: 'any' }));
    assert.equal(config.trustedWriter, 'any');
    assert.equal(config.rules.length, 4);
  });

  it('control: the same rules load from kmsg and journald, which name their writer', () => {
    assert.equal(loadOne('k.yaml', stringify({ plugin: 'kmsg', source: 'k', ...RULES })).rules.length, 4);
    const journald = { plugin: 'journald', source: 'j', pluginConfig: { source: 'app' }, ...RULES };
    assert.equal(loadOne('j.yaml', stringify(journald)).rules.length, 4);
  });

  it('control: a filelog YAML of info events only loads without trustedWriter', () => {
    const config = loadOne('app.yaml', stringify({ ...FILELOG, rules: [RULES.rules[0]] }));
    assert.equal(config.trustedWriter, undefined);
  });

  it('trustedWriter other than any is an error for a file: it has no fields to check', () => {
    const issues = loadErrors({ 'app.yaml': stringify({ ...FILELOG, trustedWriter: 'system' }) });
    assert.deepEqual(
      issues.map((i) => [i.path, i.message]),
      [['trustedWriter', 'a log file records no writer: only "any" (every line is evidence) applies']],
    );
  });

  it("NPD's JSON filelog configs (and the same rules in JSON) load unchanged", () => {
    for (const f of [
      'disk-log-message-filelog.json',
      'docker-monitor-filelog.json',
      'kernel-monitor-filelog.json',
    ]) {
      const [loaded] = loadConfigs([{ file: join(NPD_DIR, f) }], [systemLogConfigKind]);
      assert.equal((loaded?.config as LogMonitorConfig | undefined)?.plugin, 'filelog', f);
    }
    assert.equal(loadOne('app.json', JSON.stringify({ ...FILELOG, ...RULES })).rules.length, 4);
  });
});

const T0 = Date.UTC(2026, 0, 5, 3, 0, 0);
/** kernel/hung_task.c check_hung_task(), as rsyslog writes it to kern.log. */
const HUNG = 'node-1 kernel: [ 1234.567890] INFO: task docker:1234 blocked for more than 120 seconds.';

/** A filelog config (NPD's kernel-monitor-filelog.json by default) following a real file under a temp root. */
function followed(
  t: TestContext,
  trustFileWriters: boolean,
  file = join(NPD_DIR, 'kernel-monitor-filelog.json'),
) {
  const root = tempDir(t);
  const [loaded] = loadConfigs([{ file }], [systemLogConfigKind]);
  const config = { ...(loaded?.config as LogMonitorConfig), lookbackMs: HOUR };
  const path = join(root, config.logPath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '');
  const clock = new FakeClock(T0);
  const logged: Record<string, unknown>[] = [];
  const logger = createLogger({ format: 'json', write: (l) => logged.push(JSON.parse(l)) });
  const deps = { ...makeDeps(clock, root), logger, trustFileWriters };
  const opts = { uptimeFs: { readFileSync: () => '1000000.00 1.00\n' }, watch: null, pollIntervalMs: 250 };
  const type = systemLogMonitorType({
    kmsg: undefined,
    journald: undefined,
    filelog: (c, d) => createFilelogSource(c, d, { ...opts, zone: fixedZone(0) }),
  });
  const monitor = type.create(config, deps);
  const events: ProblemEvent[] = [];
  let conditions: readonly Condition[] = [];
  void monitor.start((s) => {
    events.push(...s.events);
    if (s.conditions.length > 0) conditions = s.conditions;
  });
  t.after(() => monitor.stop());
  const append = (text: string) => {
    appendFileSync(path, `Jan  5 03:00:01 ${text}\n`);
    clock.advance(1000);
  };
  const deadlock = () => conditions.find((c) => c.type === 'KernelDeadlock');
  return { deps, events, append, deadlock, logged };
}

const untrusted = (registry: Parameters<typeof metric>[0], rule: string) =>
  metric(registry, 'npd_log_lines_untrusted_total', { source: 'kernel-monitor', rule });

describe("NPD's kernel-monitor-filelog.json over a real appended line", () => {
  it('raises nothing, counts each rule it matched and warned at start naming the file', async (t) => {
    const h = followed(t, false);
    h.append(HUNG);
    assert.equal(h.deadlock()?.status, 'False', 'no KernelDeadlock from a line any user can log');
    assert.deepEqual(h.events, [], 'no TaskHung Warning event either');
    assert.equal(await untrusted(h.deps.registry, 'DockerHung'), 1);
    assert.equal(await untrusted(h.deps.registry, 'TaskHung'), 1);
    const warning = h.logged.find((l) => String(l.msg).startsWith('these filelog rules raise nothing'));
    assert.match(String(warning?.file), /kernel-monitor-filelog\.json$/);
    assert.deepEqual(warning?.rules, [
      'OOMKilling',
      'TaskHung',
      'UnregisterNetDevice',
      'KernelOops',
      'DockerHung',
    ]);
  });

  it('a line no rule matches counts nowhere', async (t) => {
    const h = followed(t, false);
    h.append('node-1 kernel: [ 1234.567890] eth0: link up');
    assert.equal(await untrusted(h.deps.registry, 'TaskHung'), 0);
    assert.deepEqual(h.events, []);
  });

  it('with --trust-file-writers, the same line raises what NPD raises', async (t) => {
    const h = followed(t, true);
    h.append(HUNG);
    assert.equal(h.deadlock()?.status, 'True');
    assert.equal(h.deadlock()?.reason, 'DockerHung');
    assert.ok(h.events.some((e) => e.reason === 'TaskHung' && e.severity === 'warn'));
    assert.equal(await untrusted(h.deps.registry, 'DockerHung'), 0);
    assert.ok(!h.logged.some((l) => String(l.msg).startsWith('these filelog rules raise nothing')));
  });
});

describe('the shipped disk.yaml over a real appended line', () => {
  const disk = join(import.meta.dirname, '../../../rules/disk.yaml');
  const SMART = 'node-1 smartd[812]: Device: /dev/sdd [SAT], FAILED SMART self-check. BACK UP DATA NOW!';

  it('gives a Normal event, the most a line of a file nobody vouches for may give', (t) => {
    const h = followed(t, false, disk);
    h.append(SMART);
    assert.deepEqual(
      h.events.map((e) => [e.reason, e.severity]),
      [['SMARTSelfCheckFailed', 'info']],
    );
    assert.ok(!h.logged.some((l) => String(l.msg).startsWith('these filelog rules raise nothing')));
  });
});
