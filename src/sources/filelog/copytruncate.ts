import type { OpenFile } from './rotated.ts';
import type { TailFs } from './tail-fs.ts';

/**
 * The bytes kept of a followed file's start: with the last bytes before the read offset, the
 * fingerprint that tells the copy copytruncate made of it (a new inode, never at the path) from a file
 * rotated in and out between two looks. A log's first line carries a timestamp, so two generations
 * differ within it.
 */
export const HEAD_BYTES = 4096;

/** What the follower had read of a file when it found it truncated. */
export interface ReadSoFar {
  /** The file's first bytes, up to HEAD_BYTES (fewer when less was read). */
  readonly head: Buffer;
  /** The last bytes before `offset`. */
  readonly tail: Buffer;
  readonly offset: number;
}

/** Keeps the file's first bytes as they are read (`offset` is where `chunk` was read from). */
export function grownHead(head: Buffer, offset: number, chunk: Buffer): Buffer {
  if (offset !== head.length || head.length >= HEAD_BYTES) return head;
  return Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]);
}

/**
 * `fd` (of `size` bytes) holds what was read, at the same offsets: its start and the bytes just before
 * the read offset are the ones read. logrotate's copytruncate copies the file, then truncates it, so its
 * copy holds all that was read and maybe more written since.
 */
export function isCopyOf(fs: TailFs, fd: number, size: number, read: ReadSoFar): boolean {
  if (read.offset === 0 || read.head.length === 0 || size < read.offset) return false;
  return holds(fs, fd, 0, read.head) && holds(fs, fd, read.offset - read.tail.length, read.tail);
}

/**
 * Truncated (copytruncate), or rewritten in place and already grown past our offset: then the bytes
 * just before the offset are no longer the ones we read. Notes the size seen otherwise.
 */
export function rewritten(fs: TailFs, f: OpenFile): boolean {
  const { size } = fs.fstatSync(f.fd);
  // Smaller than it was: truncated, also when nothing of it was read yet (offset 0, no signature).
  if (size < f.offset || size < f.size) return true;
  if (size > f.offset && f.tail.length > 0 && !holds(fs, f.fd, f.offset - f.tail.length, f.tail)) return true;
  f.size = Math.max(f.size, size);
  return false;
}

function holds(fs: TailFs, fd: number, position: number, expected: Buffer): boolean {
  const got = Buffer.alloc(expected.length);
  return fs.readSync(fd, got, got.length, position) === got.length && got.equals(expected);
}
