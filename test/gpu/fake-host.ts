/**
 * The dry run's stand-in for a GPU machine: the fake NVML (test/support/fake-nvml) with N GPUs, a host
 * root whose sys/bus/pci/devices shows the same GPUs (so the device-count check agrees), and whose
 * dev/kmsg is a FIFO the agent's kmsg reader reads as it reads the kernel's. The "fault" writes what the
 * real H200 printed for Xid 31 and 43 (test/golden/cases/rules-gpu-h200/input.log, from
 * ../shared/fixtures/gpu-h200/driver-and-xid.kmsg) into that FIFO and appends the XidCriticalError event
 * the real NVML delivered (nvml-events.jsonl: type 0x8, data = the Xid) to FAKE_NVML_EVENTS.
 * Everything but the CUDA fault and the real driver runs as on the GPU machine.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../support/agent-process.ts';
import { buildFakeNvml } from '../support/fake-nvml/build.ts';
import { appendFakeNvmlEvents, fakeNvmlEnv, writeFakeNvmlState } from '../support/fake-nvml/state.ts';
import type { FaultOutcome } from './fault.ts';

/** Waits until the agent has taken what was written (kmsg: this fault's first n records). */
export interface Delivered {
  kmsg(records: number): Promise<void>;
  nvml(): Promise<void>;
}

/** nvmlEventTypeXidCriticalError (nvml.h; gpu.md 2.3). */
const XID_CRITICAL = 0x8;
const H200_LINES = join(REPO, 'test', 'golden', 'cases', 'rules-gpu-h200', 'input.log');

export interface FakeHost {
  /** --host-root for the agent. */
  readonly root: string;
  /** The fake libnvidia-ml.so.1 (the NVML config's `library`). */
  readonly library: string;
  /** FAKE_NVML_STATE and FAKE_NVML_EVENTS, for the agent and the probe. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Writes Xid `xid`'s kernel records and NVML event, as the driver would on a real fault, in the order
   * `order` says (on the H200 the two arrived 6 ms apart, either may win). A FIFO read returns whatever
   * is buffered, where /dev/kmsg returns one record a read: `delivered.kmsg(n)` waits until the agent has
   * read this fault's first n records, so each write is read alone; `delivered.nvml()` until the agent
   * has taken the event, so the order holds.
   */
  fault(xid: 31 | 43, order: 'kernel-first' | 'nvml-first', delivered: Delivered): Promise<FaultOutcome>;
  close(): void;
}

/** The fake's default bus id of GPU i (fake-nvml.c: 00000000:00:<06+i in hex>.0), as sysfs names it. */
function sysfsAddress(i: number): string {
  return `0000:00:${(6 + i).toString(16).padStart(2, '0')}.0`;
}

/** One NVIDIA 3D controller (class 0x030200) per GPU, as /sys/bus/pci/devices shows an H200. */
function writePciBus(root: string, gpus: number): void {
  for (let i = 0; i < gpus; i++) {
    const dir = join(root, 'sys', 'bus', 'pci', 'devices', sysfsAddress(i));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'vendor'), '0x10de\n');
    writeFileSync(join(dir, 'device'), '0x2335\n');
    writeFileSync(join(dir, 'class'), '0x030200\n');
  }
}

/** The real H200's records: the GPU's identity (printed once, before its first Xid) and each Xid. */
function h200Records(): { identity: string[]; xid: Map<number, string> } {
  const records = readFileSync(H200_LINES, 'utf8').split('\n');
  const identity = records.filter((r) => /NVRM: GPU (at PCI|Board Serial)/.test(r));
  const xid = new Map<number, string>();
  for (const r of records) {
    const m = /NVRM: Xid \(PCI:[^)]*\): (\d+),/.exec(r);
    if (m) xid.set(Number(m[1]), r);
  }
  return { identity, xid };
}

/** A kmsg record stamped now (the reader skips records older than its start), with our seq and pid. */
function restamp(record: string, seq: number, pid: number): string {
  const cut = record.indexOf(';');
  const [prio, , , flags] = record.slice(0, cut).split(',');
  const uptimeUs = Math.round(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1e6);
  const text = record.slice(cut + 1).replace(/pid=\d+/, `pid=${pid}`);
  return `${prio},${seq},${uptimeUs},${flags};${text}\n`;
}

export function makeFakeHost(dir: string, gpus: number): FakeHost {
  const root = join(dir, 'host');
  mkdirSync(join(root, 'dev'), { recursive: true });
  writePciBus(root, gpus);
  const kmsg = join(root, 'dev', 'kmsg');
  execFileSync('mkfifo', [kmsg]);
  // Held open for writing all along: a FIFO without a writer polls as hung up, which /dev/kmsg never does.
  const writer = openSync(kmsg, constants.O_RDWR | constants.O_NONBLOCK);
  const env = fakeNvmlEnv(dir);
  writeFakeNvmlState(env.FAKE_NVML_STATE, { count: gpus });
  writeFileSync(env.FAKE_NVML_EVENTS, '');
  const lines = h200Records();
  let seq = 1_000_000;
  let identified = false;
  return {
    root,
    library: buildFakeNvml(),
    env,
    async fault(xid, order, delivered) {
      const startedAt = Date.now();
      const records = [...(identified ? [] : lines.identity), lines.xid.get(xid) as string];
      identified = true;
      const event = async () => {
        appendFakeNvmlEvents(env.FAKE_NVML_EVENTS, { index: 0, type: XID_CRITICAL, data: xid });
        await delivered.nvml();
      };
      if (order === 'nvml-first') await event();
      for (const [i, r] of records.entries()) {
        writeSync(writer, restamp(r, seq++, process.pid));
        await delivered.kmsg(i + 1);
      }
      if (order === 'kernel-first') await event();
      return {
        xid,
        way: `dry-run, ${order}`,
        error: 'none (dry run: no CUDA fault)',
        pid: process.pid,
        startedAt,
      };
    },
    close: () => closeSync(writer),
  };
}
