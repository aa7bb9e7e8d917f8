import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Status } from '../../../../src/core/types.ts';
import { START_FAILURE_MESSAGE } from '../../../../src/monitors/custom-plugin/exec.ts';
import { advance, metric, monitorHarness, outcome, pluginConfig, T0 } from './helpers.ts';

const NTP = { type: 'NTPProblem', reason: 'NTPIsUp', message: 'ntp service is up' };
const permanent = { type: 'permanent', condition: 'NTPProblem', reason: 'NTPIsDown', path: '/check' };
const temporary = { type: 'temporary', reason: 'NTPIsDown', path: '/temp' };

function ntpConfig(extra: Record<string, unknown> = {}, rules: unknown[] = [permanent]) {
  return pluginConfig({ pluginConfig: { invoke_interval: '10s', ...extra }, conditions: [NTP], rules });
}

/** One line per status: the NTPProblem condition and any events. */
function summary(statuses: readonly Status[]): string[] {
  return statuses.map((s) => {
    const c = s.conditions.find((x) => x.type === 'NTPProblem');
    const cond = c ? `${c.status}/${c.reason}/${c.message}@${(c.transition - T0) / 1000}` : '-';
    const events = s.events.map((e) => `${e.severity}:${e.reason}:${e.message}`);
    return [cond, ...events].join(' | ');
  });
}

describe('custom plugin monitor state machine', () => {
  it('publishes the default conditions first, then every result with the full condition list', async () => {
    const h = monitorHarness(ntpConfig(), (e) =>
      e.script('/check', [
        outcome('OK', 'ntp.service is running'),
        outcome('NonOK', 'ntp.service is not running'),
        outcome('NonOK', 'still not running'),
        outcome('Unknown', 'no systemctl'),
        outcome('Unknown', 'no systemctl either'),
        outcome('OK', 'ntp.service is running'),
      ]),
    );
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 50_000, 1000);
    assert.deepEqual(summary(h.statuses), [
      'False/NTPIsUp/ntp service is up@0',
      'False/NTPIsUp/ntp service is up@0',
      'True/NTPIsDown/ntp.service is not running@10 | warn:NTPIsDown:Node condition NTPProblem is now: True, reason: NTPIsDown, message: "ntp.service is not running"',
      'True/NTPIsDown/ntp.service is not running@10',
      'Unknown/NTPIsUp/no systemctl@30 | info:NTPIsUp:Node condition NTPProblem is now: Unknown, reason: NTPIsUp, message: "no systemctl"',
      'Unknown/NTPIsUp/no systemctl@30',
      'False/NTPIsUp/ntp service is up@50 | info:NTPIsUp:Node condition NTPProblem is now: False, reason: NTPIsUp, message: "ntp service is up"',
    ]);
    assert.ok(h.statuses.every((s) => s.source === 'test-plugins'));
    await h.monitor.stop();
  });

  it('updates a True condition on a message change only when enable_message_change_based_condition_update is set', async () => {
    const answers = [outcome('NonOK', 'bad'), outcome('NonOK', 'worse')];
    const off = monitorHarness(ntpConfig(), (e) => e.script('/check', [...answers]));
    const on = monitorHarness(ntpConfig({ enable_message_change_based_condition_update: true }), (e) =>
      e.script('/check', [...answers]),
    );
    for (const h of [off, on]) {
      await h.monitor.start((s) => h.statuses.push(s));
      await advance(h.clock, 10_000, 1000);
      await h.monitor.stop();
    }
    assert.deepEqual(summary(off.statuses).slice(2), ['True/NTPIsDown/bad@0']);
    // The new message is written and announced; the transition stays at the first NonOK (issue 39).
    assert.deepEqual(summary(on.statuses).slice(2), [
      'True/NTPIsDown/worse@0 | warn:NTPIsDown:Node condition NTPProblem is now: True, reason: NTPIsDown, message: "worse"',
    ]);
  });

  it('skip_initial_status publishes nothing until the first result', async () => {
    const h = monitorHarness(ntpConfig({ skip_initial_status: true }), (e) =>
      e.script('/check', [outcome('NonOK', 'down')], 2000),
    );
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 1900);
    assert.deepEqual(h.statuses, []);
    await advance(h.clock, 100);
    assert.deepEqual(summary(h.statuses), [
      'True/NTPIsDown/down@2 | warn:NTPIsDown:Node condition NTPProblem is now: True, reason: NTPIsDown, message: "down"',
    ]);
    await h.monitor.stop();
  });

  it('turns a temporary NonOK into a Warning event and a temporary Unknown into an error count only', async () => {
    const h = monitorHarness(ntpConfig({}, [temporary]), (e) =>
      e.script('/temp', [outcome('NonOK', 'down'), outcome('OK', 'up'), outcome('Unknown', 'cannot tell')]),
    );
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 20_000, 1000);
    assert.deepEqual(summary(h.statuses), [
      'False/NTPIsUp/ntp service is up@0',
      'False/NTPIsUp/ntp service is up@0 | warn:NTPIsDown:down',
      'False/NTPIsUp/ntp service is up@0',
      'False/NTPIsUp/ntp service is up@0',
    ]);
    assert.equal(await metric(h.registry, 'npd_plugin_errors_total', { reason: 'unknown' }), 1);
    assert.equal(await metric(h.registry, 'npd_plugin_errors_total', { reason: 'start' }), 0);
    await h.monitor.stop();
  });
});

describe('custom plugin monitor metrics', () => {
  it('counts runs by rule and result, timeouts, truncations and start failures', async () => {
    const h = monitorHarness(ntpConfig({}, [permanent, temporary]), (e) => {
      e.script('/check', [
        outcome('NonOK', 'x'.repeat(80), { stdoutTruncated: true, stderrTruncated: true }),
        outcome('Unknown', 'Timeout when running plugin "/check"', {
          failure: 'timeout',
          state: 'signal: killed',
        }),
      ]);
      e.script('/temp', [
        outcome('Unknown', START_FAILURE_MESSAGE, { failure: 'start', error: 'ENOENT: spawn /temp' }),
      ]);
    });
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 10_000, 1000);
    const m = (name: string, labels: Record<string, string>) =>
      metric(h.registry, name, { source: 'test-plugins', ...labels });
    // Both rules share the reason NTPIsDown, so their labels carry the rule index.
    assert.equal(await m('npd_plugin_runs_total', { rule: 'NTPIsDown[0]', result: 'nonok' }), 1);
    assert.equal(await m('npd_plugin_runs_total', { rule: 'NTPIsDown[0]', result: 'unknown' }), 1);
    assert.equal(await m('npd_plugin_runs_total', { rule: 'NTPIsDown[1]', result: 'unknown' }), 2);
    assert.equal(await m('npd_plugin_timeouts_total', { rule: 'NTPIsDown[0]' }), 1);
    assert.equal(await m('npd_plugin_timeouts_total', { rule: 'NTPIsDown[1]' }), 0);
    assert.equal(await m('npd_plugin_output_truncated_total', { stream: 'stdout' }), 1);
    assert.equal(await m('npd_plugin_output_truncated_total', { stream: 'stderr' }), 1);
    assert.equal(await m('npd_plugin_errors_total', { reason: 'start' }), 2);
    // A start failure is counted once, as a start failure, not again as a temporary Unknown.
    assert.equal(await m('npd_plugin_errors_total', { reason: 'unknown' }), 0);
    const text = await h.registry.getSingleMetricAsString('npd_plugin_duration_seconds');
    assert.match(text, /^npd_plugin_duration_seconds_count\{source="test-plugins"\} 4$/m);
    await h.monitor.stop();
  });

  it('feeds problem_counter and problem_gauge only when metricsReporting is on', async () => {
    const run = async (metricsReporting: boolean) => {
      const config = pluginConfig({ metricsReporting, conditions: [NTP], rules: [permanent] });
      const h = monitorHarness(config, (e) => e.script('/check', [outcome('NonOK', 'down')]));
      await h.monitor.start((s) => h.statuses.push(s));
      await advance(h.clock, 1000);
      await h.monitor.stop();
      return [
        await metric(h.registry, 'problem_counter', { reason: 'NTPIsDown' }),
        await metric(h.registry, 'problem_gauge', { type: 'NTPProblem', reason: 'NTPIsDown' }),
      ];
    };
    assert.deepEqual(await run(true), [1, 1]);
    assert.deepEqual(await run(false), [undefined, undefined]);
  });

  it('survives a throwing consumer: the result is counted as an internal error and the schedule goes on', async () => {
    const h = monitorHarness(ntpConfig({ skip_initial_status: true }), () => {});
    await h.monitor.start(() => {
      throw new Error('consumer bug');
    });
    await advance(h.clock, 20_000, 1000);
    assert.deepEqual(h.executor.startsOf('/check'), [0, 10_000, 20_000]);
    assert.equal(await metric(h.registry, 'npd_plugin_errors_total', { reason: 'internal' }), 3);
    await h.monitor.stop();
  });

  it('reports itself healthy while running even when every plugin fails', async () => {
    const h = monitorHarness(ntpConfig(), (e) =>
      e.script('/check', [outcome('Unknown', START_FAILURE_MESSAGE, { failure: 'start', error: 'ENOENT' })]),
    );
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 30_000, 1000);
    assert.deepEqual(h.monitor.health(), { up: true, healthy: true });
    assert.equal(await metric(h.registry, 'npd_plugin_errors_total', { reason: 'start' }), 4);
    await h.monitor.stop();
  });
});
