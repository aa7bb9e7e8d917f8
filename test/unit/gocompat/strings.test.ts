import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { goTrimSpace, isGoSpace } from '../../../src/gocompat/strings.ts';

/** The reference: Go's unicode.IsSpace is the Unicode White_Space property, code point by code point. */
function referenceTrim(text: string): string {
  const points = [...text];
  const space = (p: string | undefined) => p !== undefined && /^\p{White_Space}$/u.test(p);
  let start = 0;
  let end = points.length;
  while (start < end && space(points[start])) start++;
  while (end > start && space(points[end - 1])) end--;
  return points.slice(start, end).join('');
}

/** A deterministic generator, so a failing input can be reproduced. */
function* adversarial(): Generator<string> {
  const alphabet = [
    ' ',
    '\t',
    '\n',
    '\v',
    '\f',
    '\r',
    '\u0085',
    '\u00a0',
    '\u2003',
    '\u3000',
    '\ufeff',
    '\ud83d',
    '\ude00',
    'x',
    '\u200b',
    '\u180e',
  ];
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  for (let i = 0; i < 2000; i++) {
    const length = next() % 40;
    let s = '';
    for (let j = 0; j < length; j++) s += alphabet[next() % alphabet.length];
    yield s;
  }
  yield '';
  yield ' '.repeat(1000);
  yield `x${' '.repeat(1000)}x`;
  yield `${'\u3000'.repeat(500)}x${'\u2028'.repeat(500)}`;
}

describe("goTrimSpace (Go's strings.TrimSpace)", () => {
  it('treats exactly the White_Space code points as space, U+FEFF and U+200B not', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const expected = /^\p{White_Space}$/u.test(String.fromCharCode(unit));
      assert.equal(isGoSpace(unit), expected, `U+${unit.toString(16).padStart(4, '0')}`);
    }
    assert.equal(goTrimSpace(' \t\n\v\f\r\u0085\u00a0\u2003x y\u3000\n'), 'x y');
    assert.equal(goTrimSpace('\ufeffx\ufeff'), '\ufeffx\ufeff');
  });

  it('agrees with a code-point reference on adversarial inputs', () => {
    for (const input of adversarial())
      assert.equal(goTrimSpace(input), referenceTrim(input), JSON.stringify(input));
  });

  // The regex this replaced backtracked on every space of an inner run: about 4 s for one 64 KiB
  // record, hours for this input. Linear, it takes milliseconds; the bound leaves a margin of over 1000x.
  it('trims a 4 MiB line with a long inner space run in linear time', () => {
    const module = fileURLToPath(new URL('../../../src/gocompat/strings.ts', import.meta.url));
    const script = `import(${JSON.stringify(module)}).then(({ goTrimSpace }) => {
      const s = 'x' + ' '.repeat(4 << 20) + 'x';
      process.stdout.write(String(goTrimSpace(' ' + s + ' ').length));
    });`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 30_000,
      encoding: 'utf8',
    });
    assert.equal(run.signal, null, 'killed: goTrimSpace did not finish within 30 s');
    assert.equal(run.stdout, String((4 << 20) + 2), run.stderr);
  });
});
