// The PrometheusRule alerts (deploy/components/metrics/prometheusrule.yaml) with the real promtool
// (test/tools/go-tools.sh): `promtool check rules`, and `promtool test rules` on the unit tests in
// alerts/ that feed series and assert which alerts fire and which do not. Negative controls: a rule
// naming a wrong metric fails the unit tests; a broken expression fails the check.
//   node --import tsx --test test/helm/alerts.test.ts
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { ROOT } from '../deploy/support.ts';
import { runTool, shippedGroups, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();
const FIXTURES = join(import.meta.dirname, 'alerts');

describe('alerts: promtool check rules and test rules', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'npd-alerts-'));
  const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith('.test.yaml'));
  for (const f of fixtures) copyFileSync(join(FIXTURES, f), join(dir, f));
  const writeRules = (groups: object) => writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
  const promtool = (args: string[]) => runTool(tools!.promtool, args, dir);
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('promtool check rules accepts every shipped alert', async () => {
    writeRules(shippedGroups());
    const r = await promtool(['check', 'rules', 'rules.yaml']);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const count = shippedGroups().flatMap((g) => g.rules).length;
    assert.match(r.stdout, new RegExp(`SUCCESS: ${count} rules found`));
  });

  test('promtool test rules: each alert fires when it should and stays silent otherwise', async () => {
    assert.ok(fixtures.length >= 3, 'the unit test files are there');
    writeRules(shippedGroups());
    const r = await promtool(['test', 'rules', ...fixtures]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.equal((r.stdout.match(/SUCCESS/g) ?? []).length, fixtures.length, r.stdout);
    const tested = new Set(
      fixtures.flatMap((f) =>
        [...readFileSync(join(FIXTURES, f), 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]),
      ),
    );
    for (const rule of shippedGroups().flatMap((g) => g.rules)) {
      if (rule.alert)
        assert.ok(tested.has(rule.alert), `${rule.alert} has no unit test in test/helm/alerts/`);
    }
  });

  test('control: an alert naming a wrong metric fails its unit test', async () => {
    writeRules(
      shippedGroups().map((g) => ({
        ...g,
        rules: g.rules.map((r) => ({
          ...r,
          expr: r.expr.replace('npd_condition_problem', 'npd_condition_problems'),
        })),
      })),
    );
    const r = await promtool(['test', 'rules', 'problems.test.yaml']);
    assert.notEqual(r.code, 0, 'promtool must report the alert that no longer fires');
    assert.match(r.stdout + r.stderr, /FAILED/);
  });

  test('control: a broken expression fails promtool check rules', async () => {
    const groups = shippedGroups();
    groups[0]!.rules[0]!.expr = 'max by (node (problem_gauge) > 0';
    writeRules(groups);
    const r = await promtool(['check', 'rules', 'rules.yaml']);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /parse error|FAILED/);
  });

  // NPD's own configs load unchanged, so their reasons count too: DockerHung is in NPD's
  // kernel-monitor.json (with --trust-quoted-text) but not in rules/ (docs/rules.md, "Who wrote the text").
  test("the community chart's reasons and conditions mapped in community.test.yaml are ones rules/ or NPD's configs emit", () => {
    const emitted = new Set<string>();
    for (const f of readdirSync(join(ROOT, 'rules')).filter((x) => x.endsWith('.yaml'))) {
      for (const m of readFileSync(join(ROOT, 'rules', f), 'utf8').matchAll(
        /^\s+-?\s*(?:reason|condition|type): (\w+)$/gm,
      )) {
        emitted.add(m[1]!);
      }
    }
    const npd = join(ROOT, 'test/fixtures/npd-config');
    for (const f of readdirSync(npd).filter((x) => x.endsWith('.json'))) {
      for (const m of readFileSync(join(npd, f), 'utf8').matchAll(/"(?:reason|condition|type)": "(\w+)"/g)) {
        emitted.add(m[1]!);
      }
    }
    const fixture = readFileSync(join(FIXTURES, 'community.test.yaml'), 'utf8');
    const named = [...fixture.matchAll(/(?:reason|type)="(\w+)"/g)].map((m) => m[1]!);
    assert.ok(named.length >= 16, 'every community alert is in the fixture');
    for (const n of named)
      assert.ok(emitted.has(n), `${n}: no rule in rules/ or NPD's configs has that reason or condition`);
  });
});
