import { access } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { goDuration } from '../../config/schema-kit.ts';
import { errorMessage } from '../../core/errors.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import { type AdjtimexFn, koffiAdjtimex, STA_UNSYNC, type Timex } from '../../host/clib/adjtimex.ts';
import { querySntp } from '../../host/protocols/sntp.ts';
import { deadline } from '../../host/process/timeout.ts';
import type { ProbeResult, ProbeStatus } from '../../rules/probe-engine.ts';
import { mainRule, type ProbeCheck, type ProbeEnv, type ProbeKind, type ProbeSpec } from './kind.ts';

const sntp = z.strictObject({
  server: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(123),
  /** Absolute offset from the server that counts as a problem. */
  maxOffset: goDuration.default(1000),
  requestTimeout: goDuration.default(2000),
});

const options = z.strictObject({
  /** Read the kernel's NTP state with adjtimex(2); off means state files only. */
  adjtimex: z.boolean().default(true),
  /** systemd's rule: maxerror of 16 s or more means unsynchronised (ntp_synced()). */
  maxError: goDuration.default(16_000),
  /** Files whose existence means "synchronised", below --host-root; used when adjtimex is unavailable. */
  fallbackFiles: z.array(z.string().startsWith('/')).default(['/run/systemd/timesync/synchronized']),
  sntp: sntp.optional(),
});

export type NtpOptions = z.infer<typeof options>;

type Verdict = { status: ProbeStatus; message: string };

/** Clock synchronisation: the kernel's view (adjtimex), daemon state files, optionally an SNTP offset. */
export const ntpProbe: ProbeKind<NtpOptions> = {
  kind: 'ntp',
  options,
  defaults: () => ({
    condition: 'NTPProblem',
    reason: 'NTPIsDown',
    healthyReason: 'NTPIsUp',
    healthyMessage: 'ntp service is up',
  }),
  create: (spec, env) => createNtpCheck(spec, env, koffiAdjtimex()),
};

export function createNtpCheck(spec: ProbeSpec<NtpOptions>, env: ProbeEnv, adjtimex: AdjtimexFn): ProbeCheck {
  const rule = mainRule(spec);
  const o = spec.options;
  return {
    rules: [rule],
    async check(ctx): Promise<ProbeResult[]> {
      const verdicts = [await kernelVerdict(o, env, adjtimex)];
      if (o.sntp) verdicts.push(await sntpVerdict(o.sntp, env, ctx.signal));
      const worst =
        verdicts.find((v) => v.status === 'NonOK') ?? verdicts.find((v) => v.status === 'Unknown');
      return [{ rule, status: worst?.status ?? 'OK', message: verdicts.map((v) => v.message).join('; ') }];
    },
  };
}

async function kernelVerdict(o: NtpOptions, env: ProbeEnv, adjtimex: AdjtimexFn): Promise<Verdict> {
  let why = 'adjtimex disabled';
  if (o.adjtimex) {
    const t = await adjtimex();
    if (!('unavailable' in t)) return timexVerdict(t, o.maxError * 1000);
    why = t.unavailable;
  }
  return fileVerdict(o.fallbackFiles, env.paths.root, why);
}

function timexVerdict(t: Timex, maxErrorUs: number): Verdict {
  const numbers = `maxerror ${formatGoDuration(t.maxErrorUs / 1000)}, esterror ${formatGoDuration(t.estErrorUs / 1000)}`;
  if ((t.status & STA_UNSYNC) !== 0)
    return { status: 'NonOK', message: `kernel clock is not synchronised (STA_UNSYNC, ${numbers})` };
  if (t.maxErrorUs >= maxErrorUs)
    return { status: 'NonOK', message: `kernel clock is not synchronised (${numbers})` };
  return { status: 'OK', message: `kernel clock is synchronised (${numbers})` };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** A state file proves sync; its directory without it proves a daemon that has not synced yet. */
async function fileVerdict(files: readonly string[], root: string, why: string): Promise<Verdict> {
  let daemonSeen: string | undefined;
  for (const file of files) {
    if (await exists(join(root, file))) return { status: 'OK', message: `${file} exists (${why})` };
    if (!daemonSeen && (await exists(join(root, dirname(file))))) daemonSeen = file;
  }
  if (daemonSeen)
    return { status: 'NonOK', message: `clock is not synchronised: ${daemonSeen} is missing (${why})` };
  return {
    status: 'Unknown',
    message: `cannot tell whether the clock is synchronised: ${why}, and no time daemon state file`,
  };
}

async function sntpVerdict(
  s: NonNullable<NtpOptions['sntp']>,
  env: ProbeEnv,
  signal: AbortSignal,
): Promise<Verdict> {
  const d = deadline(env.clock, s.requestTimeout, signal);
  try {
    const a = await querySntp(s.server, s.port, env.clock, d.signal);
    const offset = `offset ${formatGoDuration(Math.round(a.offsetMs))} from ${s.server} (stratum ${a.stratum})`;
    if (Math.abs(a.offsetMs) > s.maxOffset)
      return { status: 'NonOK', message: `clock ${offset} exceeds ${formatGoDuration(s.maxOffset)}` };
    return { status: 'OK', message: `clock ${offset}` };
  } catch (err) {
    signal.throwIfAborted();
    const what = d.expired() ? `no answer within ${formatGoDuration(s.requestTimeout)}` : errorMessage(err);
    return { status: 'Unknown', message: `SNTP ${s.server}: ${what}` };
  } finally {
    d.cancel();
  }
}
