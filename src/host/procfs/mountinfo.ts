/** One line of /proc/<pid>/mountinfo (proc(5)), with the fields the probes need. */
export interface MountEntry {
  readonly mountPoint: string;
  readonly mountOptions: readonly string[];
  readonly fsType: string;
  readonly source: string;
  readonly superOptions: readonly string[];
}

/** Paths in mountinfo escape space, tab, newline and backslash as octal (\040). */
function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const sep = fields.indexOf('-', 6);
    if (fields.length < 10 || sep < 0) continue;
    out.push({
      mountPoint: unescapeOctal(fields[4] ?? ''),
      mountOptions: (fields[5] ?? '').split(','),
      fsType: fields[sep + 1] ?? '',
      source: unescapeOctal(fields[sep + 2] ?? ''),
      superOptions: (fields[sep + 3] ?? '').split(','),
    });
  }
  return out;
}

function covers(mountPoint: string, path: string): boolean {
  return mountPoint === '/' || path === mountPoint || path.startsWith(`${mountPoint}/`);
}

/**
 * The mount a path lives on: the longest covering mount point, and among mounts stacked on the same
 * point the last one listed, which is the one on top.
 */
export function mountFor(entries: readonly MountEntry[], path: string): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const e of entries) {
    if (!covers(e.mountPoint, path)) continue;
    if (!best || e.mountPoint.length >= best.mountPoint.length) best = e;
  }
  return best;
}

/** Read-only either per mount (`mount -o remount,ro /x`) or for the whole super block (ext4 errors=remount-ro). */
export function isReadOnly(e: MountEntry): boolean {
  return e.mountOptions.includes('ro') || e.superOptions.includes('ro');
}
