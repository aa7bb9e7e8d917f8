import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runReplay } from '../../src/replay/command.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * `replay --format kmsg` with rules/kernel.yaml over 16 records of 64 KiB, each a long run of spaces
 * between two words: the input that made the old regex trim quadratic (65-80 s, issue 17 item 11).
 */
export function longRecordReplayMs(records = 16, bytes = 64 * 1024): number {
  const dir = mkdtempSync(join(tmpdir(), 'npd-bench-long-'));
  try {
    const text = `start${' '.repeat(bytes - 8)}end`;
    const log = Array.from({ length: records }, (_, i) => `3,${i},${i * 1000},-;${text}\n`).join('');
    const input = join(dir, 'kmsg.log');
    writeFileSync(input, log);
    const started = process.hrtime.bigint();
    const code = runReplay(['--config', join(ROOT, 'rules/kernel.yaml'), '--format', 'kmsg', input], {
      stdout: () => {},
      stderr: () => {},
      readStdin: () => '',
    });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (code !== 0) throw new Error(`replay exited ${code}`);
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
