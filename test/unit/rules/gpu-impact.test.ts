/**
 * One GPU finding, one impact: rules/gpu.yaml's kernel-log rules grade every Xid the way the NVML monitor
 * (src/monitors/gpu/xid-catalog.ts, rules/gpu-nvml.yaml) grades it for AcceleratedHardwareReady, read
 * through the subsystem table the agent builds from both files (src/conditions/subsystem-table.ts). For
 * every code the GPUUnhealthy reasons the kernel-log rules set must have the impact NVML gives them, and
 * the events must agree too (held by the same condition, or the same impact); every reason both files
 * set on GPUUnhealthy must have one impact; and every rule that sets GPUUnhealthy is fatal (docs/rules.md,
 * "Subsystem and impact": fatal = the node needs a repair or a replacement; a GPU reset or a reboot is a
 * repair). test/unit/monitors/gpu/xid-catalog.test.ts checks the reasons; this file checks the impacts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { type LoadedConfig, loadConfigs } from '../../../src/config/load.ts';
import { GPU_CHECKS } from '../../../src/monitors/gpu/checks/index.ts';
import { gpuConfigKind } from '../../../src/monitors/gpu/schema.ts';
import { classifyXid } from '../../../src/monitors/gpu/xid-catalog.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig, LogRuleConfig } from '../../../src/rules/config.ts';
import { compilePattern } from '../../../src/rules/pattern.ts';

const ROOT = join(import.meta.dirname, '../../..');
const CONDITION = 'GPUUnhealthy';
/** The codes compared: every code the catalog names, and well past it (xid-catalog.test.ts's range). */
const LAST_CODE = 1100;

function load(file: string): LoadedConfig {
  const [loaded] = loadConfigs(
    [{ file: join(ROOT, file) }],
    [systemLogConfigKind, gpuConfigKind(GPU_CHECKS)],
  );
  assert.ok(loaded, `${file}: not loaded`);
  return loaded;
}

const KERNEL = load('rules/gpu.yaml') as LoadedConfig<LogMonitorConfig>;
const NVML = load('rules/gpu-nvml.yaml') as LoadedConfig<{
  source: string;
  rules: readonly { type: string; condition?: string; reason: string }[];
}>;

/** An Xid line as the open kernel module prints it (kernel_rc.c), with neutral text after the code. */
function xidLine(code: number): string {
  return `NVRM: Xid (PCI:0000:3b:00): ${code}, pid=1234, name=python3, channel 0x0000000a`;
}

/** The same Xid with the text that makes 149 (NVLink5 Fatal) and 154 (reset required) set the condition. */
function decidingLine(code: number): string | undefined {
  if (code >= 144 && code <= 150)
    return `NVRM: Xid (PCI:0000:3b:00): ${code}, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x00000000)`;
  if (code === 154)
    return 'NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)';
  return undefined;
}

/** Every disagreement of the kernel-log rules (`kernel`, a gpu.yaml config) with the NVML monitor's. */
function disagreements(kernel: LoadedConfig<LogMonitorConfig>): string[] {
  const table = SubsystemTable.from([kernel, NVML]);
  const k = kernel.config.source;
  const n = NVML.config.source;
  const rules = kernel.config.rules.map((r) => ({ rule: r, pattern: compilePattern(r.pattern) }));
  const hits = (text: string): LogRuleConfig[] =>
    rules.filter((r) => r.pattern.test(text)).map((r) => r.rule);
  const out: string[] = [];
  const impactOf = (source: string, reason: string) => table.condition(source, CONDITION, reason)?.impact;

  for (let code = 0; code <= LAST_CODE; code++) {
    const c = classifyXid(code);
    const lines = [xidLine(code), decidingLine(code)].filter((l): l is string => l !== undefined);
    const matched = lines.flatMap(hits);
    // The condition: each GPUUnhealthy reason the kernel log sets for this code against NVML's grade.
    const want = c.conditionReason === undefined ? undefined : impactOf(n, c.conditionReason);
    for (const r of matched.filter((r) => r.type === 'permanent' && r.condition === CONDITION)) {
      const got = impactOf(k, r.reason);
      if (want !== undefined && got !== want)
        out.push(`Xid ${code}: ${CONDITION} ${r.reason} is ${got} in gpu.yaml, ${want} from NVML`);
    }
    // The event: held by the same condition on both sides (the condition decides), or the same impact.
    const kernelEvent = table.event(k, c.eventReason);
    const nvmlEvent = table.event(n, c.eventReason);
    if (kernelEvent?.heldBy !== nvmlEvent?.heldBy)
      out.push(
        `Xid ${code}: ${c.eventReason} held by ${kernelEvent?.heldBy ?? 'nothing'} in gpu.yaml, by ${nvmlEvent?.heldBy ?? 'nothing'} from NVML`,
      );
    else if (kernelEvent?.heldBy === undefined && kernelEvent?.impact !== nvmlEvent?.impact)
      out.push(
        `Xid ${code}: ${c.eventReason} is ${kernelEvent?.impact} in gpu.yaml, ${nvmlEvent?.impact} from NVML`,
      );
  }

  // Every reason both monitors set on GPUUnhealthy (GPUFallenOffBus, NvidiaNVLinkError, the Xid ones).
  const nvmlReasons = new Set(
    NVML.config.rules.filter((r) => r.type === 'permanent' && r.condition === CONDITION).map((r) => r.reason),
  );
  for (const r of kernel.config.rules) {
    if (r.type !== 'permanent' || r.condition !== CONDITION) continue;
    const got = impactOf(k, r.reason);
    if (nvmlReasons.has(r.reason) && got !== impactOf(n, r.reason))
      out.push(`${CONDITION} ${r.reason} is ${got} in gpu.yaml, ${impactOf(n, r.reason)} from NVML`);
    // Every GPUUnhealthy finding needs a GPU reset, a reboot or a replacement: a repair.
    if (got !== 'fatal') out.push(`${CONDITION} ${r.reason} is ${got} in gpu.yaml, not fatal`);
  }
  return [...new Set(out)];
}

/** gpu.yaml with one rule changed. */
function withRule(
  reason: string,
  type: string,
  change: Partial<LogRuleConfig>,
): LoadedConfig<LogMonitorConfig> {
  let found = 0;
  const rules = KERNEL.config.rules.map((r) => {
    if (r.reason !== reason || r.type !== type) return r;
    found++;
    return { ...r, ...change };
  });
  assert.equal(found, 1, `control: gpu.yaml has one ${type} rule ${reason}`);
  return { ...KERNEL, config: { ...KERNEL.config, rules } };
}

describe('GPU impacts: rules/gpu.yaml agrees with the NVML monitor', () => {
  it('grades every Xid code 0-1100 and every shared GPUUnhealthy reason as NVML does, all fatal', () => {
    assert.deepEqual(disagreements(KERNEL), []);
  });

  it('control: the comparison sees the conditions (Xid 61, 79 fatal on both sides) and NVML is fatal', () => {
    const table = SubsystemTable.from([KERNEL, NVML]);
    for (const reason of ['NvidiaXID61Error', 'NvidiaXID79Error', 'GPUFallenOffBus']) {
      assert.equal(table.condition(NVML.config.source, CONDITION, reason)?.impact, 'fatal', reason);
      assert.equal(table.condition(KERNEL.config.source, CONDITION, reason)?.impact, 'fatal', reason);
    }
    assert.equal(table.event(KERNEL.config.source, 'NVRMXid31')?.impact, 'info');
  });

  it('control: a GPUUnhealthy Xid rule left at the default impact (warning) is reported', () => {
    const bad = withRule('NvidiaXID61Error', 'permanent', { impact: undefined });
    assert.deepEqual(disagreements(bad), [
      'Xid 61: GPUUnhealthy NvidiaXID61Error is warning in gpu.yaml, fatal from NVML',
      'GPUUnhealthy NvidiaXID61Error is warning in gpu.yaml, fatal from NVML',
      'GPUUnhealthy NvidiaXID61Error is warning in gpu.yaml, not fatal',
    ]);
  });

  it('control: a non-Xid GPUUnhealthy rule with the wrong impact is reported', () => {
    assert.deepEqual(disagreements(withRule('GPUFallenOffBus', 'permanent', { impact: 'warning' })), [
      'GPUUnhealthy GPUFallenOffBus is warning in gpu.yaml, fatal from NVML',
      'GPUUnhealthy GPUFallenOffBus is warning in gpu.yaml, not fatal',
    ]);
    assert.deepEqual(disagreements(withRule('GSPBootFailed', 'permanent', { impact: 'warning' })), [
      'GPUUnhealthy GSPBootFailed is warning in gpu.yaml, not fatal',
    ]);
  });

  it('control: an event NVML leaves unheld that gpu.yaml grades differently is reported', () => {
    assert.deepEqual(disagreements(withRule('NVRMXid31', 'temporary', { impact: 'warning' })), [
      'Xid 31: NVRMXid31 is warning in gpu.yaml, info from NVML',
    ]);
    assert.deepEqual(disagreements(withRule('NVRMXid79', 'temporary', { heldBy: undefined })), [
      'Xid 79: NVRMXid79 held by nothing in gpu.yaml, by GPUUnhealthy from NVML',
    ]);
  });
});
