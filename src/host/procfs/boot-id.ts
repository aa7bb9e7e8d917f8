import { procFile, readText } from './proc.ts';

/** The kernel's random boot ID: a UUID drawn at every boot (drivers/char/random.c, proc_do_uuid). */
const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A boot ID as the journal writes it (32 hex digits, an sd_id128) in the kernel's UUID form. */
export function bootIdFromJournal(id: string): string | undefined {
  const uuid = id.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  return BOOT_ID.test(uuid) ? uuid : undefined;
}

/**
 * Reads /proc/sys/kernel/random/boot_id below the given proc root. The file is not namespaced, so a
 * container reads the host's. Returns undefined when it is missing or not a UUID (a kernel without
 * sysctl, a test root without the file): the caller then cannot tell a reboot from a restart.
 */
export async function readBootId(proc: string): Promise<string | undefined> {
  try {
    const text = (await readText(procFile(proc, 'sys', 'kernel', 'random', 'boot_id'))).trim();
    return BOOT_ID.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}
