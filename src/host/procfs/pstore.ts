import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** One kernel log dump that a pstore backend (efi, efi_pstore, ramoops, erst) kept across a reboot. */
export interface PstoreRecord {
  /** The file name, e.g. `dmesg-efi-165467895700001` or `dmesg-ramoops-0`. */
  readonly name: string;
  readonly text: string;
  /** The file's mtime: the backends set it to when the dump was written. */
  readonly writtenAt: number;
}

export interface PstoreRead {
  readonly records: readonly PstoreRecord[];
  /** Files left unread: compressed ones the kernel could not decompress (`.enc.z`), oversized ones. */
  readonly skipped: readonly { readonly name: string; readonly reason: 'compressed' | 'oversized' }[];
}

/** Records are at most a backend's record size (ramoops' and efi's are a few KiB to 64 KiB). */
const MAX_RECORD_BYTES = 256 * 1024;

/**
 * Reads the dmesg records of /sys/fs/pstore (fs/pstore/inode.c names them "dmesg-<backend>-<id>").
 * A missing directory (no pstore mounted, no backend) is no records, not an error.
 */
export async function readPstoreDmesg(dir: string): Promise<PstoreRead> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const records: PstoreRecord[] = [];
  const skipped: PstoreRead['skipped'][number][] = [];
  for (const name of names.filter((n) => n.startsWith('dmesg-')).sort()) {
    if (name.endsWith('.enc.z')) {
      skipped.push({ name, reason: 'compressed' });
      continue;
    }
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (info.size > MAX_RECORD_BYTES) {
      skipped.push({ name, reason: 'oversized' });
      continue;
    }
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text !== undefined) records.push({ name, text, writtenAt: info.mtimeMs });
  }
  return { records, skipped };
}
