// Issue 39 item 2: no config kind may declare a condition type the kubelet or a controller owns
// (Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable). Each field that names a
// condition type is refused with the file and the field; the same config with a type of its own loads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { EXTRA_CONDITIONS } from '../../../src/conditions/extra.ts';
import { checkOwners } from '../../../src/conditions/owners.ts';
import { SUBSYSTEM_CONDITIONS } from '../../../src/conditions/subsystem.ts';
import type { ConfigIssue } from '../../../src/config/errors.ts';
import { type ConfigKind, type LoadedConfig, loadConfigs } from '../../../src/config/load.ts';
import { RESERVED_CONDITION_TYPES } from '../../../src/core/reserved-conditions.ts';
import { customPluginConfigKind } from '../../../src/monitors/custom-plugin/schema.ts';
import { probeKinds } from '../../../src/monitors/probe/kinds.ts';
import { probeConfigKind } from '../../../src/monitors/probe/schema.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import { systemStatsConfigKind } from '../../../src/monitors/system-stats/schema.ts';
import { loadErrors } from './helpers.ts';

const ALL_KINDS: readonly ConfigKind[] = [
  systemLogConfigKind,
  customPluginConfigKind,
  probeConfigKind,
  systemStatsConfigKind,
];
const KUBELET_TYPES = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];
const FILE = '/etc/npd/mine.yaml';

/** Where a config names a condition type, and a config that names `type` there (YAML, as users write). */
interface Place {
  readonly name: string;
  readonly field: string;
  readonly config: (type: string) => object;
}

const cond = (type: string) => ({ type, reason: 'Fine', message: 'fine' });

const PLACES: readonly Place[] = [
  {
    name: 'a log monitor condition',
    field: 'conditions[0].type',
    config: (t) => ({
      plugin: 'kmsg',
      conditions: [cond(t)],
      rules: [{ type: 'permanent', condition: t, reason: 'Hung', pattern: 'task \\S+ blocked' }],
    }),
  },
  {
    name: 'a log rule condition',
    field: 'rules[0].condition',
    config: (t) => ({
      plugin: 'journald',
      pluginConfig: { source: 'kernel' },
      conditions: [cond(t)],
      rules: [{ type: 'permanent', condition: t, reason: 'Hung', pattern: 'task \\S+ blocked' }],
    }),
  },
  {
    name: "a temporary log rule's heldBy (a hold no monitor could ever report)",
    field: 'rules[1].heldBy',
    config: (t) => ({
      plugin: 'kmsg',
      conditions: [cond(t)],
      rules: [
        { type: 'permanent', condition: t, reason: 'Hung', pattern: 'task \\S+ blocked' },
        { type: 'temporary', reason: 'Blocked', pattern: 'task \\S+ blocked.*', heldBy: t },
      ],
    }),
  },
  {
    name: 'a custom plugin condition',
    field: 'conditions[0].type',
    config: (t) => ({
      plugin: 'custom',
      conditions: [cond(t)],
      rules: [{ type: 'permanent', condition: t, reason: 'Bad', path: '/bin/true' }],
    }),
  },
  {
    name: 'a custom plugin rule condition',
    field: 'rules[0].condition',
    config: (t) => ({
      plugin: 'custom',
      conditions: [cond(t)],
      rules: [{ type: 'permanent', condition: t, reason: 'Bad', path: '/bin/true' }],
    }),
  },
  {
    name: 'a probe monitor condition',
    field: 'conditions[0].type',
    config: (t) => ({ plugin: 'probe', conditions: [cond(t)], probes: [{ kind: 'fd', condition: t }] }),
  },
  {
    name: "a probe's condition",
    field: 'probes[0].condition',
    config: (t) => ({ plugin: 'probe', conditions: [cond(t)], probes: [{ kind: 'fd', condition: t }] }),
  },
  {
    name: "a systemd probe's restart condition",
    field: 'probes[0].restarts.condition',
    config: (t) => ({
      plugin: 'probe',
      probes: [{ kind: 'systemd', unit: 'kubelet.service', restarts: { condition: t } }],
    }),
  },
  {
    name: "an interfaces probe's flapping condition",
    field: 'probes[0].flapping.condition',
    config: (t) => ({ plugin: 'probe', probes: [{ kind: 'interfaces', flapping: { condition: t } }] }),
  },
];

function load(config: object): LoadedConfig[] {
  return loadConfigs([{ file: FILE }], ALL_KINDS, () => stringify(config));
}

function errorsOf(config: object): ConfigIssue[] {
  try {
    load(config);
  } catch (err) {
    return [...((err as { issues?: ConfigIssue[] }).issues ?? [])];
  }
  return assert.fail('expected the config to be refused');
}

describe('kubelet-owned condition types are refused at config load', () => {
  it('the list is the five types the node lifecycle controller taints on', () => {
    assert.deepEqual([...RESERVED_CONDITION_TYPES].sort(), [...KUBELET_TYPES].sort());
  });

  for (const place of PLACES) {
    it(`${place.name} (${place.field}) refuses each of them, naming the file and the field`, () => {
      for (const type of KUBELET_TYPES) {
        const issues = errorsOf(place.config(type));
        const hit = issues.find((i) => i.path === place.field);
        assert.ok(hit, `${type}: no issue at ${place.field}: ${JSON.stringify(issues)}`);
        assert.equal(hit.file, FILE);
        assert.match(hit.message, new RegExp(`^condition type "${type}" belongs to .*taints the node`));
      }
    });

    it(`${place.name}: control, the same config with KernelDeadlock loads`, () => {
      const [loaded] = load(place.config('KernelDeadlock'));
      assert.ok(loaded);
      const types = (loaded.config as { conditions: { type: string }[] }).conditions.map((c) => c.type);
      assert.ok(types.includes('KernelDeadlock'), types.join(', '));
    });
  }

  it('types compare exactly, as the API server does: "ready" and "ReadyForWork" load', () => {
    for (const type of ['ready', 'ReadyForWork', 'KernelReady']) {
      const [loaded] = load(PLACES[0]?.config(type) ?? {});
      assert.equal(loaded?.file, FILE, type);
    }
  });

  it('an NPD JSON config is held to the same check', () => {
    const json = JSON.stringify({
      plugin: 'kmsg',
      conditions: [cond('KernelDeadlock'), cond('MemoryPressure')],
      rules: [],
    });
    const issues = loadErrors({ 'kernel-monitor.json': json });
    assert.deepEqual(
      issues.map((i) => `${i.file}: ${i.path}`),
      ['kernel-monitor.json: conditions[1].type'],
    );
  });

  it('system-stats declares no conditions at all: a conditions key is refused as unknown', () => {
    const issues = errorsOf({ invokeInterval: '60s', conditions: [cond('DiskPressure')] });
    assert.deepEqual(
      issues.map((i) => `${i.path}: ${i.message}`),
      ['conditions: unknown key'],
    );
  });
});

describe('the owner check refuses a kubelet type that a config kind resolved', () => {
  const loaded = (file: string, types: string[]): LoadedConfig => ({
    kind: 'probe-monitor',
    file,
    config: { conditions: types.map(cond) },
  });

  it('even when the kind let it through, at start-up and on reload alike', () => {
    const { issues } = checkOwners([loaded('a.yaml', ['KernelDeadlock', 'PIDPressure'])]);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]?.file, 'a.yaml');
    assert.equal(issues[0]?.path, 'conditions');
    assert.match(issues[0]?.message ?? '', /^condition type "PIDPressure" belongs to/);
  });

  it('control: the agent-owned types pass', () => {
    assert.deepEqual(checkOwners([loaded('a.yaml', ['KernelDeadlock', 'ProcessIDsLow'])]).issues, []);
  });
});

describe('no built-in type is a kubelet type', () => {
  it('subsystem conditions, the extra conditions and every probe kind default', () => {
    const builtIn = [...Object.values(SUBSYSTEM_CONDITIONS), ...EXTRA_CONDITIONS];
    for (const kind of probeKinds()) {
      const options = kind.options.safeParse({});
      if (!options.success) continue;
      builtIn.push(kind.defaults(options.data).condition);
      for (const extra of kind.extraConditions?.(options.data) ?? []) builtIn.push(extra.type);
    }
    assert.ok(builtIn.length > 20, `control: ${builtIn.length} types collected`);
    for (const type of builtIn) assert.ok(!KUBELET_TYPES.includes(type), type);
  });
});
