/**
 * Properties of the rule files shipped in rules/: they load, every pattern is evaluated on the newest
 * line only (no multi-line cost), every rule has a golden line, every reason is documented, and the
 * GPU rules give each Xid code exactly one event.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfigs, parseText } from '../../../../src/config/load.ts';
import { systemLogConfigKind } from '../../../../src/monitors/system-log/schema.ts';
import { parseReplayInput, type ReplayFormat, type ReplayLine } from '../../../../src/replay/parse-input.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';
import { compilePattern } from '../../../../src/rules/pattern.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const RULES_DIR = join(ROOT, 'rules');
const CASES_DIR = join(ROOT, 'test', 'golden', 'cases');

/** The system-log-monitor files; rules/ also holds other monitor kinds' files. */
const RULE_FILES = readdirSync(RULES_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .filter((f) => {
    const { value } = parseText(f, readFileSync(join(RULES_DIR, f), 'utf8'));
    const plugin = (value as { plugin?: unknown } | undefined)?.plugin;
    return typeof plugin === 'string' && systemLogConfigKind.plugins.includes(plugin);
  })
  .sort();

function load(name: string): LogMonitorConfig {
  const [loaded] = loadConfigs([{ file: join(RULES_DIR, name) }], [systemLogConfigKind]);
  assert.ok(loaded);
  return loaded.config as LogMonitorConfig;
}

/** The journald plugin's SYSLOG_IDENTIFIER / _SYSTEMD_UNIT filter, as replay applies it. */
function accepts(config: LogMonitorConfig, line: ReplayLine): boolean {
  if (config.plugin !== 'journald') return true;
  const { source, unit } = config.pluginConfig;
  if (source && line.identifier !== undefined && line.identifier !== source) return false;
  if (unit && line.unit !== undefined && line.unit !== unit) return false;
  return true;
}

/** Lines of every golden case that runs the given rule file. */
function goldenLines(file: string): ReplayLine[] {
  const out: ReplayLine[] = [];
  for (const name of readdirSync(CASES_DIR)) {
    const spec = JSON.parse(readFileSync(join(CASES_DIR, name, 'case.json'), 'utf8')) as {
      configs: string[];
      format: ReplayFormat;
      bootTime?: string;
    };
    if (!spec.configs.includes(`rules/${file}`)) continue;
    const text = readFileSync(join(CASES_DIR, name, 'input.log'), 'utf8');
    out.push(
      ...parseReplayInput(text, spec.format, Date.parse(spec.bootTime ?? '1970-01-01T00:00:00Z')).lines,
    );
  }
  return out;
}

describe('shipped rule files', () => {
  it('include every system-log-monitor file of the rule set', () => {
    assert.deepEqual(RULE_FILES, [
      'abrt.yaml',
      'clock-chrony.yaml',
      'clock-journald.yaml',
      'clock-timesyncd.yaml',
      'containerd.yaml',
      'disk.yaml',
      'docker-counter.yaml',
      'docker.yaml',
      'gpu.yaml',
      'hardware.yaml',
      'kernel-counter.yaml',
      'kernel.yaml',
      'kubelet.yaml',
      'network.yaml',
      'readonly.yaml',
      'smartd.yaml',
      'storage.yaml',
      'systemd-counter.yaml',
      'systemd-oomd.yaml',
      'systemd.yaml',
    ]);
  });

  const docs = readFileSync(join(ROOT, 'docs', 'rules.md'), 'utf8');

  for (const file of RULE_FILES) {
    describe(file, () => {
      const config = load(file);

      it('only has patterns that are matched against the newest line alone', () => {
        for (const r of config.rules) {
          for (const p of [r.pattern, r.recoverPattern, r.revertPattern]) {
            if (p !== undefined) assert.ok(compilePattern(p).lastLineOnly, `${r.reason}: ${p}`);
          }
        }
      });

      it('declares only conditions that some permanent rule sets', () => {
        for (const c of config.conditions) {
          assert.ok(
            config.rules.some((r) => r.type === 'permanent' && r.condition === c.type),
            `${c.type} is never set`,
          );
        }
      });

      it('has a golden input line for every rule, revert and recover pattern', () => {
        const input = goldenLines(file).filter((l) => accepts(config, l));
        assert.ok(input.length > 0, `no golden case runs rules/${file}`);
        for (const [i, r] of config.rules.entries()) {
          for (const [what, p] of [
            ['pattern', r.pattern],
            ['recoverPattern', r.recoverPattern],
            ['revertPattern', r.revertPattern],
          ] as const) {
            if (p === undefined) continue;
            const compiled = compilePattern(p);
            assert.ok(
              input.some((l) => compiled.exec(l.message)),
              `rules[${i}] ${r.reason}: no golden line matches its ${what}`,
            );
          }
        }
      });

      it('is documented in docs/rules.md with all its reasons and conditions', () => {
        assert.ok(docs.includes(`rules/${file}`), `docs/rules.md does not mention rules/${file}`);
        for (const name of [...config.rules.map((r) => r.reason), ...config.conditions.map((c) => c.type)]) {
          assert.ok(docs.includes(name), `docs/rules.md does not mention ${name}`);
        }
      });
    });
  }
});

describe('gpu.yaml Xid rules', () => {
  const config = load('gpu.yaml');
  const temporary = config.rules
    .filter((r) => r.type === 'temporary')
    .map((r) => ({ r, p: compilePattern(r.pattern) }));
  const permanent = config.rules
    .filter((r) => r.type === 'permanent')
    .map((r) => ({ r, p: compilePattern(r.pattern) }));
  const specific = new Set(
    config.rules.map((r) => /^NVRMXid(\d+)$/.exec(r.reason)?.[1]).filter((c): c is string => c !== undefined),
  );
  // NVIDIA's Xid catalog: RESET_GPU, reboot, CONTACT_SUPPORT, CHECK_MECHANICALS and the workflows 48
  // and 74 (docs/rules.md). 144-150 only when the line says Fatal and 154 only by its recovery action
  // (the corpus has both); the generated line here says neither.
  const HELD = [
    46, 48, 54, 61, 62, 64, 74, 79, 95, 109, 110, 119, 120, 123, 136, 140, 142, 143, 151, 155, 156, 158,
  ];

  it('has a rule per code with its own action', () => {
    assert.deepEqual(
      [...specific].map(Number).sort((a, b) => a - b),
      [13, 31, 43, 45, 63, 92, 94, 149, 154, ...HELD].sort((a, b) => a - b),
    );
  });

  it("gives every Xid code exactly one event, and GPUUnhealthy only for the catalog's reset/reboot/support codes", () => {
    for (let code = 0; code < 2000; code++) {
      for (const address of ['PCI:0000:3b:00', '0000:03:00']) {
        const line = `NVRM: Xid (${address}): ${code}, pid=4721, name=python3, Ch 00000008`;
        const events = temporary.filter(({ p }) => p.exec(line)).map(({ r }) => r.reason);
        const want = specific.has(String(code)) ? `NVRMXid${code}` : 'NVRMXid';
        assert.deepEqual(events, [want], `Xid ${code}`);
        const conditions = permanent.filter(({ p }) => p.exec(line)).map(({ r }) => r.reason);
        assert.deepEqual(conditions, HELD.includes(code) ? [`NvidiaXID${code}Error`] : [], `Xid ${code}`);
      }
    }
  });

  it("holds each held code's event by GPUUnhealthy, and no other event", () => {
    const held = temporary.filter(({ r }) => r.heldBy === 'GPUUnhealthy').map(({ r }) => r.reason);
    assert.deepEqual(held.sort(), [...HELD, 149, 154].map((c) => `NVRMXid${c}`).sort());
  });

  it('does not mistake other NVRM lines for Xids', () => {
    for (const line of [
      'NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Mar  5 22:42:15 UTC 2024',
      'NVRM: GPU at PCI:0000:3b:00: GPU-5a2e1c4f-9b3d-4e7a-8c6f-1d2e3f4a5b6c',
      'NVRM: Xid (PCI:0000:3b:00): , pid=4721',
    ]) {
      assert.deepEqual(
        temporary.filter(({ p }) => p.exec(line)).map(({ r }) => r.reason),
        [],
        line,
      );
    }
  });
});
