import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

export interface TarFile {
  /** Relative path, at most 100 bytes. */
  readonly name: string;
  readonly data: Buffer;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header (the "ustar Interchange Format" of POSIX pax(1)): a regular file, mode 0644. */
function header(file: TarFile, mtimeSec: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  if (Buffer.byteLength(file.name) > 100) throw new Error(`tar: name too long: ${file.name}`);
  h.write(file.name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(file.data.length, 12), 124, 'ascii');
  h.write(octal(mtimeSec, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write('root', 265, 'ascii');
  h.write('root', 297, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/**
 * A gzip-compressed tar archive of the files, readable with `tar xzf`. Compressed on libuv's thread
 * pool: tens of MiB would otherwise hold the event loop (and the health probe) for seconds.
 */
export async function tarGz(files: readonly TarFile[], mtimeMs: number): Promise<Buffer> {
  const mtime = Math.floor(mtimeMs / 1000);
  const chunks: Buffer[] = [];
  for (const file of files) {
    chunks.push(header(file, mtime), file.data);
    const pad = (BLOCK - (file.data.length % BLOCK)) % BLOCK;
    if (pad > 0) chunks.push(Buffer.alloc(pad));
  }
  chunks.push(Buffer.alloc(2 * BLOCK));
  return promisify(gzip)(Buffer.concat(chunks));
}
