import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The fake NVML's state file built from an object, so a test says what it scripts in words. Each key
 * becomes the line fake-nvml.c documents; a key left out keeps the fake's default (one healthy H200,
 * ../shared/fixtures/gpu-h200/nvml.json).
 */
export interface FakeGpu {
  readonly uuid?: string;
  readonly name?: string;
  /** "dddddddd:bb:dd.f"; nvmlPciInfo_t's domain, bus and device are parsed from it. */
  readonly busId?: string;
  readonly pciDeviceId?: number;
  readonly pciSubSystemId?: number;
  /** Every call for this GPU answers GPU_IS_LOST (15), and so does an event wait it is registered in. */
  readonly lost?: boolean;
  /** NVML symbol (e.g. nvmlDeviceGetRemappedRows) -> the code that call answers for this GPU. */
  readonly ret?: Readonly<Record<string, number>>;
  readonly eccMode?: readonly [current: number, pending: number];
  readonly ecc?: {
    readonly correctedVolatile?: number;
    readonly correctedAggregate?: number;
    readonly uncorrectedVolatile?: number;
    readonly uncorrectedAggregate?: number;
  };
  readonly remap?: {
    readonly correctable: number;
    readonly uncorrectable: number;
    readonly pending: boolean;
    readonly failure: boolean;
  };
  /** Retired page counts; without them the calls answer NOT_SUPPORTED, as on Hopper. */
  readonly retiredSbe?: number;
  readonly retiredDbe?: number;
  readonly retiredPending?: boolean;
  /** nvmlDeviceGetCurrentClocksEventReasons' bits. */
  readonly clocks?: number;
  readonly pcieWidth?: readonly [current: number, max: number];
  readonly pcieGen?: readonly [current: number, max: number];
  readonly pcieReplay?: number;
  /** Links 0..n-1 answer active; the others NOT_SUPPORTED (the default: none). */
  readonly nvlinks?: number;
  /** One link's state, whatever nvlinks says. */
  readonly nvlink?: Readonly<Record<number, boolean>>;
  /** nvmlGpuFabricInfoV_t; without it the call answers NOT_SUPPORTED. */
  readonly fabric?: {
    readonly state: number;
    readonly status: number;
    readonly healthMask: number;
    readonly healthSummary: number;
  };
  readonly inforomValid?: boolean;
  /** Field id, or "id.scope", -> its value (as unsigned long long) or value, nvmlValueType_t and own return. */
  readonly fields?: Readonly<Record<string, number | FakeField>>;
  /** nvmlDeviceGetSupportedEventTypes' bits (default 0xff9f). */
  readonly events?: number;
}

export interface FakeField {
  readonly value: number;
  /** nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 unsigned long long (default), 4 sll, 5 int, 6 ushort. */
  readonly type?: number;
  /** The field's own nvmlReturn. */
  readonly ret?: number;
}

export interface FakeNvmlState {
  /** Default: gpus.length when gpus is given, else the fake's 1. */
  readonly count?: number;
  /** nvmlInit_v2's answer (e.g. 999: Unknown Error, as inside a container after a daemon-reload). */
  readonly init?: number;
  readonly driver?: string;
  /** Every call (but nvmlErrorString) answers this code. */
  readonly all?: number;
  /** NVML symbol -> the code that call answers for every GPU. */
  readonly ret?: Readonly<Record<string, number>>;
  /** By index; a hole keeps that GPU's defaults. */
  readonly gpus?: readonly (FakeGpu | undefined)[];
}

const hex = (n: number): string => `0x${n.toString(16)}`;
const flag = (b: boolean): string => (b ? '1' : '0');

function memoryLines(g: FakeGpu): string[] {
  const lines: string[] = [];
  if (g.eccMode) lines.push(`ecc.mode ${g.eccMode[0]} ${g.eccMode[1]}`);
  const ecc = g.ecc ?? {};
  if (ecc.correctedVolatile !== undefined) lines.push(`ecc.corrected.volatile ${ecc.correctedVolatile}`);
  if (ecc.correctedAggregate !== undefined) lines.push(`ecc.corrected.aggregate ${ecc.correctedAggregate}`);
  if (ecc.uncorrectedVolatile !== undefined)
    lines.push(`ecc.uncorrected.volatile ${ecc.uncorrectedVolatile}`);
  if (ecc.uncorrectedAggregate !== undefined) {
    lines.push(`ecc.uncorrected.aggregate ${ecc.uncorrectedAggregate}`);
  }
  const r = g.remap;
  if (r) lines.push(`remap ${r.correctable} ${r.uncorrectable} ${flag(r.pending)} ${flag(r.failure)}`);
  if (g.retiredSbe !== undefined) lines.push(`retired.sbe ${g.retiredSbe}`);
  if (g.retiredDbe !== undefined) lines.push(`retired.dbe ${g.retiredDbe}`);
  if (g.retiredPending !== undefined) lines.push(`retired.pending ${flag(g.retiredPending)}`);
  return lines;
}

function linkLines(g: FakeGpu): string[] {
  const lines: string[] = [];
  if (g.clocks !== undefined) lines.push(`clocks ${hex(g.clocks)}`);
  if (g.pcieWidth) lines.push(`pcie.width ${g.pcieWidth[0]} ${g.pcieWidth[1]}`);
  if (g.pcieGen) lines.push(`pcie.gen ${g.pcieGen[0]} ${g.pcieGen[1]}`);
  if (g.pcieReplay !== undefined) lines.push(`pcie.replay ${g.pcieReplay}`);
  if (g.nvlinks !== undefined) lines.push(`nvlinks ${g.nvlinks}`);
  for (const [link, active] of Object.entries(g.nvlink ?? {})) lines.push(`nvlink.${link} ${flag(active)}`);
  const f = g.fabric;
  if (f) lines.push(`fabric ${f.state} ${f.status} ${hex(f.healthMask)} ${f.healthSummary}`);
  if (g.inforomValid !== undefined) lines.push(`inforom.valid ${flag(g.inforomValid)}`);
  if (g.events !== undefined) lines.push(`events ${hex(g.events)}`);
  return lines;
}

function identityLines(g: FakeGpu): string[] {
  const lines: string[] = [];
  if (g.uuid !== undefined) lines.push(`uuid ${g.uuid}`);
  if (g.name !== undefined) lines.push(`name ${g.name}`);
  if (g.busId !== undefined) lines.push(`busId ${g.busId}`);
  if (g.pciDeviceId !== undefined) lines.push(`pciDeviceId ${hex(g.pciDeviceId)}`);
  if (g.pciSubSystemId !== undefined) lines.push(`pciSubSystemId ${hex(g.pciSubSystemId)}`);
  if (g.lost) lines.push('lost 1');
  for (const [symbol, code] of Object.entries(g.ret ?? {})) lines.push(`ret.${symbol} ${code}`);
  for (const [id, v] of Object.entries(g.fields ?? {})) {
    const field = typeof v === 'number' ? { value: v } : v;
    lines.push(`field.${id} ${field.value} ${field.type ?? 3} ${field.ret ?? 0}`);
  }
  return lines;
}

/** The state file's text (format: fake-nvml.c). */
export function fakeNvmlStateText(state: FakeNvmlState): string {
  const lines: string[] = ['# fake NVML state (test/support/fake-nvml/fake-nvml.c)'];
  const count = state.count ?? state.gpus?.length;
  if (count !== undefined) lines.push(`count ${count}`);
  if (state.init !== undefined) lines.push(`init ${state.init}`);
  if (state.driver !== undefined) lines.push(`driver ${state.driver}`);
  if (state.all !== undefined) lines.push(`ret.all ${state.all}`);
  for (const [symbol, code] of Object.entries(state.ret ?? {})) lines.push(`ret.${symbol} ${code}`);
  (state.gpus ?? []).forEach((g, i) => {
    if (!g) return;
    for (const line of [...identityLines(g), ...memoryLines(g), ...linkLines(g)])
      lines.push(`gpu${i}.${line}`);
  });
  return `${lines.join('\n')}\n`;
}

/** Writes the state whole and renames it into place, so a call never reads half a file. */
export function writeFakeNvmlState(path: string, state: FakeNvmlState): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, fakeNvmlStateText(state));
  renameSync(tmp, path);
}

/** One scripted event: what nvmlEventSetWait_v2 answers (index -1: a NULL device), or a return code. */
export type FakeNvmlEvent =
  | {
      readonly index: number;
      readonly type: number;
      readonly data?: number;
      readonly gpuInstanceId?: number;
      readonly computeInstanceId?: number;
    }
  | { readonly ret: number };

export function fakeNvmlEventLine(e: FakeNvmlEvent): string {
  if ('ret' in e) return `ret ${e.ret}\n`;
  const ids = e.gpuInstanceId === undefined ? '' : ` ${e.gpuInstanceId} ${e.computeInstanceId ?? 0xffffffff}`;
  return `${e.index} ${hex(e.type)} ${e.data ?? 0}${ids}\n`;
}

/** Appends events in one write, each line whole, so a waiting call never reads half of one. */
export function appendFakeNvmlEvents(path: string, ...events: FakeNvmlEvent[]): void {
  appendFileSync(path, events.map(fakeNvmlEventLine).join(''));
}

/** The environment the fake reads, with both files in dir (the state file is not written here). */
export function fakeNvmlEnv(dir: string): { FAKE_NVML_STATE: string; FAKE_NVML_EVENTS: string } {
  return { FAKE_NVML_STATE: join(dir, 'nvml-state'), FAKE_NVML_EVENTS: join(dir, 'nvml-events') };
}
