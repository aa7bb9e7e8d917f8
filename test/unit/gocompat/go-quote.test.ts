import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goQuote } from '../../../src/gocompat/go-quote.ts';

// Expected outputs are Go's strconv.Quote (what fmt's %q prints for a string).
describe('goQuote (Go strconv.Quote)', () => {
  const CASES: readonly [string, string, string][] = [
    ['plain ASCII', 'kernel has no deadlock', '"kernel has no deadlock"'],
    ['empty', '', '""'],
    ['double quotes', 'say "hi"', '"say \\"hi\\""'],
    ['single quote is not escaped', "it's", '"it\'s"'],
    ['backslash', 'C:\\dir', '"C:\\\\dir"'],
    ['newline and tab', 'a\nb\tc', '"a\\nb\\tc"'],
    ['carriage return', 'a\r', '"a\\r"'],
    ['bell, backspace, form feed, vertical tab', '\x07\b\f\v', '"\\a\\b\\f\\v"'],
    ['NUL and other control characters', '\x00\x01\x1b\x1f', '"\\x00\\x01\\x1b\\x1f"'],
    ['DEL', '\x7f', '"\\x7f"'],
    ['C1 controls', '\u0080\u009f', '"\\u0080\\u009f"'],
    ['line and paragraph separators, BOM', '\u2028\u2029\ufeff', '"\\u2028\\u2029\\ufeff"'],
    ['printable Latin-1 and CJK are kept', 'é 日本', '"é 日本"'],
    ['printable astral characters are kept', '😀𝔸', '"😀𝔸"'],
    ['percent signs are not special', '90%: %s', '"90%: %s"'],
    [
      'a kernel line with quotes and continuation',
      'EXT4-fs error (device "sda1")\n SUBSYSTEM=block',
      '"EXT4-fs error (device \\"sda1\\")\\n SUBSYSTEM=block"',
    ],
  ];
  for (const [name, input, expected] of CASES) {
    it(name, () => assert.equal(goQuote(input), expected));
  }

  it('matches JSON.stringify on printable ASCII, where Go and JSON agree', () => {
    let all = '';
    for (let c = 0x20; c < 0x7f; c++) all += String.fromCharCode(c);
    assert.equal(goQuote(all), JSON.stringify(all));
  });

  // strconv.IsPrint is false for spaces other than U+0020 (Zs), format characters (Cf), private use
  // (Co) and unassigned code points, so Go escapes them; goQuote only escapes C0/C1, DEL, U+2028/9, BOM.
  const NON_PRINTABLE: readonly [string, string][] = [
    ['\u00a0', '"\\u00a0"'], // NO-BREAK SPACE (Zs)
    ['\u3000', '"\\u3000"'], // IDEOGRAPHIC SPACE (Zs)
    ['\u00ad', '"\\u00ad"'], // SOFT HYPHEN (Cf)
    ['\u200b', '"\\u200b"'], // ZERO WIDTH SPACE (Cf)
    ['\ue000', '"\\ue000"'], // private use (Co)
    ['\u{e0001}', '"\\U000e0001"'], // LANGUAGE TAG (Cf), astral: Go uses \U with 8 digits
  ];
  for (const [input, expected] of NON_PRINTABLE) {
    const cp = `U+${(input.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
    it(`escapes non-printable ${cp} as Go does`, {}, () => assert.equal(goQuote(input), expected));
  }
});
