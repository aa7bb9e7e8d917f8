/**
 * Random RE2 patterns and log lines for the equivalence tests: the constructs the engine's shortcuts
 * must get right, on lines short enough that patterns often match.
 */

/** mulberry32: small, fast, and the same sequence on every run. */
export function rng(seed: number): {
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
} {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)] as (typeof xs)[number],
    chance: (p) => next() < p,
  };
}
export type Rng = ReturnType<typeof rng>;

// Constructs the optimizer must get right, including a class range that reaches \n.
const ATOMS = [
  '[\\t-\\r]',
  'a',
  'b',
  'x',
  ' ',
  '1',
  'ab',
  'xab',
  'a b',
  'ab1',
  '\\.',
  '.',
  '\\n',
  '\\s',
  '\\S',
  '\\d',
  '\\w',
  '[ab]',
  '[^a]',
  '[a-c ]',
  '\\bx',
  'é',
  '日',
  '[é日]',
];
const QUANT = ['', '', '', '?', '*', '+', '{1,2}', '*?', '{2}', '??'];

function genSeq(r: Rng, depth: number): string {
  let out = '';
  const n = 1 + r.int(4);
  for (let i = 0; i < n; i++) {
    let atom: string;
    if (depth < 2 && r.chance(0.15)) {
      const inner = r.chance(0.4) ? `${genSeq(r, depth + 1)}|${genSeq(r, depth + 1)}` : genSeq(r, depth + 1);
      atom = `${r.pick(['(', '(?:', '(?P<g>'])}${inner})`;
    } else if (r.chance(0.08)) {
      atom = '.*';
    } else {
      atom = r.pick(ATOMS);
    }
    const q =
      atom.length === 1 || atom.startsWith('\\') || atom.startsWith('[') || atom.startsWith('(')
        ? r.pick(QUANT)
        : '';
    out += atom.startsWith('\\b') ? atom : atom + q;
  }
  return out;
}

export function genPattern(r: Rng): string {
  let p = genSeq(r, 0);
  if (r.chance(0.1)) p = `^${p}`;
  if (r.chance(0.1)) p = `${p}$`;
  if (r.chance(0.1)) p = `${p}|${genSeq(r, 0)}`;
  if (r.chance(0.05)) p = `(?s)${p}`;
  if (r.chance(0.08)) p = `(?i)${p}`;
  return p;
}

export function genLine(r: Rng): string {
  // Non-ASCII (2-, 3- and 4-byte UTF-8) checks that match offsets are UTF-16, as the line split needs.
  const chars = ['a', 'b', 'x', ' ', '1', '.', 'A', 'B', 'a', 'b', 'x', ' ', 'é', '日', '😀'];
  let s = '';
  const n = r.int(7);
  for (let i = 0; i < n; i++) s += r.chance(0.03) ? '\n' : r.pick(chars);
  return s;
}
