// The OOM-kill alert notifies under kube-prometheus-stack's defaults: a real Alertmanager (built from
// its Go module by test/tools/alertmanager/build.sh) loaded with that chart's default inhibit rules and
// a webhook receiver on 127.0.0.1 gets NodeProblemOOMKilling, while the info-level NodeProblemOccurred
// for the same kill is muted by InfoInhibitor. Control: without the inhibit rules the info alert
// arrives too, so the test sees what the rules mute.
//   node --import tsx --test test/helm/alertmanager.test.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { waitFor } from '../support/agent-process.ts';
import { buildAlertmanager, startAlertmanager, startWebhook, type Webhook } from '../support/alertmanager.ts';
import { shippedGroups } from './support.ts';

let bin: string | undefined;
let skip: string | false = false;
try {
  bin = await buildAlertmanager();
} catch (err) {
  skip = `alertmanager unavailable: ${(err as Error).message.split('\n')[0]}`;
}

const KPS = parse(
  readFileSync(join(import.meta.dirname, 'alerts', 'kube-prometheus-stack.yaml'), 'utf8'),
) as {
  inhibit_rules: object[];
  info_inhibitor_expr: string;
};

/** What the ServiceMonitor and the kill give the series: the labels an alert's by() can keep. */
const SERIES = { namespace: 'kube-system', node: 'n1', reason: 'OOMKilling' } as const;

/** The labels Prometheus sends for a shipped alert firing on SERIES: its by() labels plus its own. */
function firing(alertname: string): Record<string, string> {
  const rule = shippedGroups()
    .flatMap((g) => g.rules as { alert?: string; expr: string; labels?: Record<string, string> }[])
    .find((r) => r.alert === alertname);
  assert.ok(rule, `no shipped alert ${alertname}`);
  const by =
    /by \(([^)]*)\)/
      .exec(rule.expr)?.[1]
      ?.split(',')
      .map((l) => l.trim()) ?? [];
  const kept = Object.fromEntries(Object.entries(SERIES).filter(([k]) => by.includes(k)));
  return { alertname, ...kept, ...rule.labels };
}

/** InfoInhibitor as its expression fires it: per info alert, unless a warning or critical one shares its namespace. */
function infoInhibitors(alerts: Record<string, string>[]): Record<string, string>[] {
  assert.match(KPS.info_inhibitor_expr, /unless on \(namespace\)/);
  const loud = alerts.filter((a) => a.severity === 'warning' || a.severity === 'critical');
  return alerts
    .filter((a) => a.severity === 'info' && !loud.some((w) => w.namespace === a.namespace))
    .map((a) => ({ ...a, alertname: 'InfoInhibitor', severity: 'none', alertstate: 'firing' }));
}

describe('an OOM kill notifies through Alertmanager with kube-prometheus-stack defaults', { skip }, () => {
  let hook: Webhook;
  before(async () => {
    hook = await startWebhook();
  });
  after(() => hook.close());

  async function notified(inhibitRules: object[]): Promise<Set<string>> {
    hook.received.length = 0;
    const am = await startAlertmanager(bin as string, {
      route: { receiver: 'webhook', group_by: ['namespace'], group_wait: '1s', group_interval: '1s' },
      receivers: [{ name: 'webhook', webhook_configs: [{ url: hook.url, send_resolved: false }] }],
      inhibit_rules: inhibitRules,
    });
    try {
      const alerts = [firing('NodeProblemOOMKilling'), firing('NodeProblemOccurred')];
      await am.send([...alerts, ...infoInhibitors(alerts)]);
      const names = () =>
        new Set(hook.received.flatMap((n) => n.alerts.map((a) => a.labels.alertname as string)));
      await waitFor(
        () => names().has('NodeProblemOOMKilling'),
        20_000,
        () => JSON.stringify(hook.received),
      );
      // Alertmanager sends a group's alerts together; give a muted one the same chance to arrive.
      await new Promise((r) => setTimeout(r, 3000));
      return names();
    } finally {
      await am.stop();
    }
  }

  test('NodeProblemOOMKilling arrives; the info NodeProblemOccurred and InfoInhibitor do not', async () => {
    assert.deepEqual([...(await notified(KPS.inhibit_rules))], ['NodeProblemOOMKilling']);
  });

  test('control: without the inhibit rules the info alert arrives as well', async () => {
    const names = await notified([]);
    assert.ok(names.has('NodeProblemOccurred'), [...names].join(', '));
  });
});
