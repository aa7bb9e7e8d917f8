import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../core/clock.ts';
import type { Condition } from '../core/types.ts';
import { type BoundedOutput, runBounded } from '../host/process/bounded-command.ts';
import { type KmsgDevice, snapshotKmsg } from '../host/clib/kmsg-snapshot.ts';
import type { HostPaths } from '../host/paths.ts';
import { readText } from '../host/procfs/proc.ts';
import { detectJournalDirectory } from '../sources/journald/args.ts';
import { type BundlePart, dropPartialFirstLine, type PartOutput } from './collect.ts';
import type { RecentEvent } from './recent-events.ts';

const MiB = 1024 * 1024;
/** Per-part caps; the request's maxBytes bounds their sum. */
export const PART_CAPS = { kmsg: 2 * MiB, journal: 4 * MiB, state: 1 * MiB, proc: 256 * 1024 } as const;
/** A journal unit's excerpt may take this long; the whole collection has its own deadline. */
export const JOURNAL_TIMEOUT_MS = 20_000;
const KMSG_MAX_RECORDS = 200_000;

/** The systemd units whose journal goes in the bundle: the node's daemons and the agent itself. */
export const JOURNAL_UNITS = ['kubelet.service', 'containerd.service', 'node-problem-detector.service'];

export interface PartSources {
  readonly paths: HostPaths;
  readonly clock: Clock;
  readonly journalctl: string;
  readonly conditions: () => readonly Condition[];
  readonly events: () => readonly RecentEvent[];
  readonly metrics: () => Promise<string>;
  readonly kmsgDevice?: KmsgDevice;
  /** Directory listing for journal detection; readdirSync by default. */
  readonly listDir?: (path: string) => readonly string[] | undefined;
}

function listDir(path: string): string[] | undefined {
  try {
    return readdirSync(path);
  } catch {
    return undefined;
  }
}

const json = (value: unknown): PartOutput => ({ text: `${JSON.stringify(value, null, 2)}\n` });

/** Everything a bundle holds, in the order it is collected (most valuable first). */
export function bundleParts(src: PartSources, sinceMinutes: number): BundlePart[] {
  return [
    kmsgPart(src),
    ...JOURNAL_UNITS.map((unit) => journalPart(src, unit, sinceMinutes)),
    { name: 'conditions.json', maxBytes: PART_CAPS.state, read: async () => json(src.conditions()) },
    { name: 'events.json', maxBytes: PART_CAPS.state, read: async () => json(src.events()) },
    { name: 'metrics.txt', maxBytes: PART_CAPS.state, read: async () => ({ text: await src.metrics() }) },
    procPart('meminfo', join(src.paths.proc, 'meminfo')),
    procPart('loadavg', join(src.paths.proc, 'loadavg')),
    procPart('uptime', join(src.paths.proc, 'uptime')),
    // The host's init's table, which the DaemonSet mounts on its own (a pod's /proc/1 is its own).
    procPart('mountinfo', src.paths.initMountinfo),
  ];
}

function kmsgPart(src: PartSources): BundlePart {
  return {
    name: 'kmsg.txt',
    maxBytes: PART_CAPS.kmsg,
    read: async (budget) => {
      const snap = snapshotKmsg(
        join(src.paths.dev, 'kmsg'),
        { maxBytes: budget, maxRecords: KMSG_MAX_RECORDS },
        src.kmsgDevice,
      );
      const notes = [
        snap.truncated ? `kept the newest ${budget} bytes of the ring` : '',
        snap.lost > 0 ? `${snap.lost} records overwritten while reading` : '',
      ].filter((n) => n !== '');
      return {
        text: snap.text,
        truncated: snap.truncated,
        ...(notes.length ? { note: notes.join('; ') } : {}),
      };
    },
  };
}

function journalPart(src: PartSources, unit: string, sinceMinutes: number): BundlePart {
  const name = `journal/${unit.replace(/\.service$/, '')}.log`;
  return {
    name,
    maxBytes: PART_CAPS.journal,
    read: async (budget) => {
      const dir = detectJournalDirectory(src.paths.root, '', { list: src.listDir ?? listDir });
      if ('missing' in dir) return { absent: dir.missing };
      const since = Math.floor((src.clock.now() - sinceMinutes * 60_000) / 1000);
      const args = [
        `--directory=${dir.path}`,
        `--unit=${unit}`,
        `--since=@${since}`,
        '--output=short-iso-precise',
        // No --quiet: it also silences the notice that tells a missing journal from an empty excerpt.
        '--no-pager',
      ];
      const cmd = {
        command: src.journalctl,
        args,
        maxBytes: budget,
        timeoutMs: JOURNAL_TIMEOUT_MS,
        keep: 'tail' as const,
      };
      return journalOutput(await runBounded(cmd, src.clock));
    },
  };
}

function journalOutput(out: BoundedOutput): PartOutput {
  if (out.code === undefined) return { absent: `journalctl not runnable: ${out.error ?? 'unknown error'}` };
  // systemd's wording (src/shared/journal-util.c, journal_access_check_and_warn()) for no journal files.
  if (/No journal files were found/.test(out.stderr))
    return { absent: 'no journal files in the journal directory' };
  // A tail kept within the budget starts mid-line; that fragment may be a value without its key.
  const text = out.truncated ? dropPartialFirstLine(out.stdout) : out.stdout;
  if (out.timedOut) return { text, truncated: true, note: 'journalctl timed out; partial' };
  if (out.code !== 0 && !out.truncated)
    throw new Error(`journalctl exited ${out.code}: ${out.stderr.trim().slice(0, 300)}`);
  return out.truncated ? { text, truncated: true, note: 'size limit: newest lines kept' } : { text };
}

function procPart(name: string, path: string): BundlePart {
  return {
    name: `proc/${name}`,
    maxBytes: PART_CAPS.proc,
    read: async (_budget, signal) => ({ text: await readText(path, signal) }),
  };
}
