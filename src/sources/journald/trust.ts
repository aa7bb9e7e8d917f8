import type { JournalWriter } from '../../core/evidence.ts';
import type { TrustedWriter } from '../../rules/config.ts';
import { journalString } from './entry.ts';

/**
 * The fields journald itself stamps on an entry, from the sender's credentials, cgroup and /proc
 * (systemd.journal-fields(7), "Trusted Journal Fields": fields starting with an underscore "cannot be
 * altered by client code"). SYSLOG_IDENTIFIER and MESSAGE are the writer's own claim: `logger -t
 * kubelet` sets the first, as any user. _COMM is the writer's process name, which it may choose
 * (prctl PR_SET_NAME), so it only counts together with _UID or _SYSTEMD_UNIT.
 */
export const TRUSTED_FIELDS = ['_TRANSPORT', '_SYSTEMD_UNIT', '_UID', '_COMM', '_EXE', '_PID'] as const;

/**
 * Transports no process can choose: `kernel` (the kernel ring buffer; userspace needs root to write
 * /dev/kmsg), `driver` (journald's own messages) and `audit` (the kernel's audit records).
 */
const KERNEL_TRANSPORTS = new Set(['kernel', 'driver', 'audit']);
/** login.defs UID_MIN: accounts below it are system accounts (daemons such as chrony, timesync). */
const FIRST_LOGIN_UID = 1000;

/** Why an entry's writer is not trusted under `policy`, or undefined when it is. */
export function untrustedWriter(
  policy: TrustedWriter,
  record: Readonly<Record<string, unknown>>,
): string | undefined {
  if (policy === 'any') return undefined;
  const field = (name: string) => journalString(record[name]);
  if (policy === 'system') {
    return systemWriter(field) ? undefined : `${writerOf(field)} is neither root nor a system service`;
  }
  for (const [name, values] of Object.entries(policy)) {
    if (!values.includes(field(name))) {
      return `${writerOf(field)} fails trustedWriter ${name}=${values.join('|')}`;
    }
  }
  return undefined;
}

/**
 * The default for configs that do not say (NPD's, which only name a SYSLOG_IDENTIFIER or a unit): the
 * kernel and journald, root, and a system account's process in a system service (chronyd runs as
 * `chrony` in chronyd.service). Not a login user's process, not even in a system unit (a user's cron
 * job runs in cron.service), and not a user manager's units (user@<uid>.service).
 */
function systemWriter(field: (name: string) => string): boolean {
  if (KERNEL_TRANSPORTS.has(field('_TRANSPORT'))) return true;
  const uid = field('_UID');
  if (uid === '0') return true;
  if (!/^\d+$/.test(uid) || Number(uid) >= FIRST_LOGIN_UID) return false;
  const unit = field('_SYSTEMD_UNIT');
  return unit.endsWith('.service') && !unit.startsWith('user@') && !unit.startsWith('user-runtime-dir@');
}

/** The writer as the log shows it: the trusted fields, `-` for absent ones. */
function writerOf(field: (name: string) => string): string {
  return TRUSTED_FIELDS.filter((n) => n !== '_EXE')
    .map((n) => `${n}=${field(n) || '-'}`)
    .join(' ');
}

/** The journal fields the source must ask journalctl for to decide `policy`. */
export function trustFields(policy: TrustedWriter): readonly string[] {
  return policy === 'any' ? [] : TRUSTED_FIELDS;
}

const WRITER_FIELDS = [
  ['transport', '_TRANSPORT'],
  ['unit', '_SYSTEMD_UNIT'],
  ['uid', '_UID'],
  ['comm', '_COMM'],
] as const;

/**
 * The trusted fields of an entry that passed its config's trustedWriter, for the evidence of what it
 * raises (core/evidence.ts); undefined under `any`, whose entries come without them.
 */
export function journalWriter(
  policy: TrustedWriter,
  record: Readonly<Record<string, unknown>>,
): JournalWriter | undefined {
  if (policy === 'any') return undefined;
  const writer: { -readonly [K in keyof JournalWriter]: string } = {};
  for (const [key, name] of WRITER_FIELDS) {
    const value = journalString(record[name]);
    if (value !== '') writer[key] = value;
  }
  return writer;
}
