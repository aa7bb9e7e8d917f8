/**
 * Held conditions in the default install (docs/rules.md "In the default install"): the page-fault oops
 * header holds KernelOops through the DaemonSet's own kmsg configs, and the facts the table gives for
 * the problems the default install cannot hold (no journal monitor, no node probe, the fd probe in the
 * pod, FileHandlesLow a Node row only with --extra-conditions) are checked against the shipped
 * manifests, so a change of the default that makes the table wrong fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { EXTRA_CONDITIONS } from '../../../src/conditions/extra.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { parseReplayInput } from '../../../src/replay/parse-input.ts';
import { type ReplayRecord, replay } from '../../../src/replay/replay.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import { kmsgEscape, loadRuleFile, ROOT } from './corpus.ts';

const HOUR = 3_600_000;

/** The values of one repeatable flag in the base DaemonSet's args, split at commas. */
function daemonSetFlag(flag: string): string[] {
  const docs = readFileSync(join(ROOT, 'deploy/base/daemonset.yaml'), 'utf8');
  const args = (parse(docs) as { spec: { template: { spec: { containers: { args: string[] }[] } } } }).spec
    .template.spec.containers[0]?.args;
  assert.ok(args && args.length > 0, 'control: the DaemonSet has args');
  return args.filter((a) => a.startsWith(`${flag}=`)).flatMap((a) => a.slice(flag.length + 1).split(','));
}

/** The system-log configs the default install runs, as shipped in deploy/base/rules. */
function defaultLogConfigs(): LogMonitorConfig[] {
  const files = daemonSetFlag('--config.system-log-monitor');
  assert.ok(files.length >= 5, `control: the DaemonSet names its rule files (${files.join(', ')})`);
  return files.map((f) => {
    assert.ok(f.startsWith('/config/'), f);
    return loadRuleFile(`deploy/base/rules/${f.slice('/config/'.length)}`);
  });
}

/** Each text as a /dev/kmsg record, `gapMs` apart; the records of the whole replay. */
function replayKmsg(
  configs: readonly LogMonitorConfig[],
  texts: readonly string[],
  gapMs = 1000,
): ReplayRecord[] {
  const start = new FakeClock().now();
  const rows = texts.map((t, i) => `2,${i + 1},${(i + 1) * gapMs * 1000},-;${kmsgEscape(t)}`);
  const parsed = parseReplayInput(`${rows.join('\n')}\n`, 'kmsg', start);
  assert.equal(parsed.lines.length, texts.length, parsed.malformed.join('; '));
  return replay(configs, parsed.lines, start);
}

function lastKernelOops(records: readonly ReplayRecord[]): ReplayRecord | undefined {
  return records.filter((r) => r.kind === 'condition' && r.type === 'KernelOops').at(-1);
}

// A page-fault oops as x86 prints it (arch/x86/mm/fault.c show_fault_oops(), then page_fault_oops()
// -> __die("Oops") in arch/x86/kernel/dumpstack.c), as in the corpus (test/corpus/kernel-crash.yaml).
const PAGE_FAULT_OOPS = [
  'BUG: kernel NULL pointer dereference, address: 0000000000000010',
  '#PF: supervisor read access in kernel mode',
  '#PF: error_code(0x0000) - not-present page',
  'Oops: 0000 [#1] SMP PTI',
];
const LATER = 'EXT4-fs (sda1): mounted filesystem with ordered data mode. Quota mode: none.';
const FORGED =
  'Oops: 0000 [#1][4242]: segfault at 0 ip 000055d0c0a4b13d sp 00007ffc2f1e9a40 error 4 in a.out[55d0c0a4b000+1000]';

describe('the page-fault oops in the default install', () => {
  const configs = defaultLogConfigs();

  test('raises KernelOops on the header and holds it (a line an hour later does not clear it)', () => {
    const oops = replayKmsg(configs, [...PAGE_FAULT_OOPS, LATER], HOUR / 4);
    const held = lastKernelOops(oops);
    assert.deepEqual(held && { status: held.status, reason: held.reason, message: held.message }, {
      status: 'True',
      reason: 'KernelOopsed',
      message: 'Oops: 0000 [#1] SMP PTI',
    });
  });

  test('only the reboot ends it: no rule of the file recovers or clears KernelOops', () => {
    const kernel = loadRuleFile('deploy/base/rules/kernel.yaml');
    const setters = kernel.rules.filter((r) => r.type === 'permanent' && r.condition === 'KernelOops');
    assert.ok(setters.length >= 5, 'control: the oops rules were read');
    for (const r of setters) assert.equal(r.recoverPattern, undefined, r.pattern);
    const declared = kernel.conditions.find((c) => c.type === 'KernelOops');
    assert.ok(declared, 'control: KernelOops is declared');
    assert.equal(declared.clearAfterMs, undefined);
  });

  test('the BUG line alone gives the event, not the condition: the header is what holds it', () => {
    const bugOnly = replayKmsg(configs, PAGE_FAULT_OOPS.slice(0, 3));
    assert.equal(lastKernelOops(bugOnly), undefined, 'no KernelOops change');
    assert.ok(bugOnly.some((r) => r.kind === 'event' && r.reason === 'KernelOops'));
  });

  test('a program named "Oops: 0000 [#1]" that segfaults raises nothing; the real header does', () => {
    const forged = replayKmsg(configs, [FORGED]);
    assert.equal(lastKernelOops(forged), undefined, 'no KernelOops change');
    assert.ok(!forged.some((r) => r.kind === 'event' && r.reason.startsWith('KernelOops')));
    const real = replayKmsg(configs, [PAGE_FAULT_OOPS.at(-1) as string]);
    assert.equal(lastKernelOops(real)?.status, 'True', 'control: the same path with the real header');
  });
});

describe('what the default install cannot hold (the reasons docs/rules.md gives)', () => {
  test('it reads no journal: every default log monitor is a kmsg monitor, in kustomize and Helm', () => {
    const plugins = defaultLogConfigs().map((c) => c.plugin);
    assert.deepEqual([...new Set(plugins)], ['kmsg']);
    const values = parse(readFileSync(join(ROOT, 'deploy/helm/node-problem-detector/values.yaml'), 'utf8'));
    const base = daemonSetFlag('--config.system-log-monitor').map((f) => f.slice('/config/'.length));
    assert.deepEqual(values.monitors.systemLog, base, 'the chart runs the same rule files');
    assert.equal(values.journald.enabled, false);
    assert.equal(values.nodeProbes.enabled, false);
  });

  test('its probes ask no daemon (no systemd, containerd, kubelet or ntp probe), and fd is one of them', () => {
    const files = daemonSetFlag('--config.probe-monitor');
    assert.deepEqual(files, ['/config/probes-daemonset.yaml']);
    const pod = parse(readFileSync(join(ROOT, 'deploy/base/config/probes-daemonset.yaml'), 'utf8'));
    const kinds = (pod.probes as { kind: string }[]).map((p) => p.kind);
    assert.ok(kinds.includes('fd'), 'the fd probe runs in the pod');
    for (const k of ['systemd', 'containerd', 'kubelet', 'ntp']) assert.ok(!kinds.includes(k), k);
  });

  test('file-max: FileHandlesLow holds the line where the probe runs, and is a Node row only with the switch', () => {
    const kernel = loadRuleFile('deploy/base/rules/kernel.yaml');
    const rule = kernel.rules.find((r) => r.reason === 'FileMaxReached');
    assert.equal(rule?.type, 'temporary');
    assert.equal((rule as { heldBy?: string }).heldBy, 'FileHandlesLow');
    assert.ok(EXTRA_CONDITIONS.includes('FileHandlesLow'));
  });

  test('docs/rules.md has a row for each of the six problems, by its real line', () => {
    const doc = readFileSync(join(ROOT, 'docs/rules.md'), 'utf8');
    const start = doc.indexOf('### In the default install');
    assert.ok(start >= 0, 'the section exists');
    const section = doc.slice(start, doc.indexOf('\n### ', start + 1));
    const lines = [
      'Oops: 0000 [#1] SMP PTI',
      "Can't synchronise: no selectable sources",
      'VFS: file-max limit',
      'containerd.service: Start request repeated too quickly.',
      '"ListPodSandbox with filter from runtime service failed"',
      '"Container runtime network not ready"',
    ];
    for (const l of lines) assert.ok(section.includes(l), l);
  });
});
