import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RE2JS } from 're2js';
import { foldForLiteral, requiredLiteral } from '../../../src/rules/literal.ts';
import { compilePattern, containsLiteral, patternError } from '../../../src/rules/pattern.ts';

/** NPD's own matcher: `(?:expr)\z`, searched unanchored. */
function npdMatches(pattern: string, text: string): boolean {
  return RE2JS.compile(`(?:${pattern})\\z`).matcher(text).find();
}

const lit = (pattern: string) => requiredLiteral(pattern)?.texts;

describe("requiredLiteral on NPD's shipped kernel-monitor patterns", () => {
  const KERNEL: readonly [string, readonly string[] | undefined][] = [
    ['Killed process \\d+ (.+) total-vm:\\d+kB, anon-rss:\\d+kB, file-rss:\\d+kB.*', ['Killed process ']],
    ['task [\\S ]+:\\w+ blocked for more than \\w+ seconds\\.', [' blocked for more than ']],
    ['task \\S+:\\w+ blocked for more than \\w+ seconds\\.', [' blocked for more than ']],
    ['task docker:\\w+ blocked for more than \\w+ seconds\\.', [' blocked for more than ']],
    [
      'unregister_netdevice: waiting for \\w+ to become free. Usage count = \\d+',
      ['unregister_netdevice: waiting for '],
    ],
    [
      'BUG: unable to handle kernel NULL pointer dereference at .*',
      ['BUG: unable to handle kernel NULL pointer dereference at '],
    ],
    ['divide error: 0000 \\[#\\d+\\] SMP', ['divide error: 0000 [#']],
    ['EXT4-fs error .*', ['EXT4-fs error ']],
    ['EXT4-fs warning .*', ['EXT4-fs warning ']],
    ['Buffer I/O error .*', ['Buffer I/O error ']],
    // `.?` after "filesystem": the dot is a wildcard, so the literal stops before it.
    ['XFS .* Shutting down filesystem.?', [' Shutting down filesystem']],
    ['CE memory read error .*', ['CE memory read error ']],
    ['.*\\[Hardware Error\\]: event severity: corrected$', ['[Hardware Error]: event severity: corrected']],
    ['.*\\[Hardware Error\\]: event severity: fatal$', ['[Hardware Error]: event severity: fatal']],
    ['Remounting filesystem read-only', ['Remounting filesystem read-only']],
    // disk-log-message-filelog: the literals are inside an alternation, one per branch.
    [
      '.*([1-9]\\d{2,}) (Currently unreadable.*sectors|Offline uncorrectable sectors).*',
      ['Currently unreadable', 'Offline uncorrectable sectors'],
    ],
    [
      'INFO: rcu_\\w+ (?:self-detected stall on CPU|detected (?:expedited )?stalls on (?:CPUs/)?tasks).*',
      [
        ' self-detected stall on CPU',
        ' detected expedited stalls on CPUs/tasks',
        ' detected expedited stalls on tasks',
        ' detected stalls on CPUs/tasks',
        ' detected stalls on tasks',
      ],
    ],
  ];
  for (const [pattern, expected] of KERNEL) {
    it(`${pattern} → ${JSON.stringify(expected)}`, () => {
      const got = requiredLiteral(pattern);
      assert.deepEqual(got?.texts, expected);
      if (got) assert.equal(got.ignoreCase, false);
    });
  }
});

describe('requiredLiteral soundness edge cases', () => {
  const CASES: readonly [string, readonly string[] | undefined, string][] = [
    // [pattern, literal, a text the pattern matches]
    ['hello?world', ['helloworld', 'hellworld'], 'hellworld'],
    ['abc?defg', ['abcdefg', 'abdefg'], 'abdefg'],
    ['ab?c', undefined, 'ac'],
    ['abcd{2,3}efg', ['abcd'], 'abcddefg'],
    ['abcd{0}efg', ['abc'], 'abcefg'],
    ['abc*defg', ['defg'], 'abdefg'],
    ['abc*?defg', ['defg'], 'abdefg'],
    ['abc+de', ['abc'], 'abcccde'],
    ['foo\\.bar', ['foo.bar'], 'foo.bar'],
    ['\\[foo\\]', ['[foo]'], '[foo]'],
    ['\\.\\*\\+x', ['.*+x'], '.*+x'],
    ['[]x]abc', [']abc', 'xabc'], ']abc'],
    ['[^]x]abc', ['abc'], 'yabc'],
    ['[a\\]b]xyz', ['xyz'], ']xyz'],
    ['[[:alpha:]]xyz', ['xyz'], 'qxyz'],
    ['(abc)def', ['abcdef'], 'abcdef'],
    ['(abc|x)?defg', ['defg'], 'defg'],
    ['(?:abcdef)gh', ['abcdefgh'], 'abcdefgh'],
    ['(a(b)c)xyz', ['abcxyz'], 'abcxyz'],
    ['(?i)Hello World', ['hello world'], 'HELLO WORLD'],
    ['(?i)Größe', undefined, 'GRÖSSE'.replace('SS', 'ß')],
    ['abc(?i)def', undefined, 'abcDEF'],
    ['(?s)abc.*', undefined, 'abc\nx'],
    ['(?i:abc)defg', ['defg'], 'ABCdefg'],
    ['\\Qa.b\\E', undefined, 'a.b'],
    ['abcd|efgh', ['abcd', 'efgh'], 'efgh'],
    [
      'Link (?:is )?[Dd]own',
      ['Link is Down', 'Link is down', 'Link Down', 'Link down'],
      'eth0: Link is Down',
    ],
    ['abc|', undefined, ''],
    ['x+(?:abc|de)', undefined, 'xde'],
    ['\\x41+bcd', ['bcd'], 'AAbcd'],
    ['(?P<dev>sd[a-z]+|nvme)X', undefined, 'sdaX'],
    ['(?P<dev>sda|nvme)X', ['sdaX', 'nvmeX'], 'sdaX'],
    ['😀?abc', ['abc'], 'abc'],
    ['ab😀+cd', ['ab😀'], 'ab😀😀cd'],
    ['(abcd|efgh)ijk', ['abcdijk', 'efghijk'], 'efghijk'],
    ['\\d+ apples', [' apples'], '3 apples'],
    ['\\bword\\b', ['word'], 'a word'],
    ['ab', undefined, 'ab'],
    ['日本語', ['日本語'], 'x日本語'],
  ];
  for (const [pattern, expected, text] of CASES) {
    it(`${pattern} → ${JSON.stringify(expected)}, and still matches ${JSON.stringify(text)}`, () => {
      assert.equal(patternError(pattern), undefined);
      assert.deepEqual(lit(pattern), expected);
      assert.ok(npdMatches(pattern, text), 'the example text must match under NPD semantics');
      const literal = requiredLiteral(pattern);
      if (literal) assert.ok(containsLiteral(text, literal), 'literal missing from a matching text');
      assert.ok(compilePattern(pattern).exec(text), 'compiled pattern rejected a matching text');
    });
  }

  // re2js rejects `[[:]`; RE2 and Go read it as the class {'[', ':'} because no `:]` follows the `[:`.
  it('reads [[:] as RE2 does: a class of "[" and ":", not a POSIX class', () => {
    assert.equal(requiredLiteral('[[:]|abc]def'), undefined);
    assert.ok(compilePattern('[[:]|abc]def').test('x['), 'the first alternative matches "["');
    assert.deepEqual(requiredLiteral('bad [[:]|blockdev]error')?.texts, ['bad ', 'blockdev]error']);
    assert.ok(compilePattern('bad [[:]|blockdev]error').test('bad :'));
    assert.ok(compilePattern('([[:])').test('a:'), 'compiles and matches');
    assert.deepEqual(requiredLiteral('[[:alpha:]]xyzw')?.texts, ['xyzw']);
  });

  it('terminates on unclosed \\x{ and \\p{ (RE2 rejects them first) and on an unclosed [:', () => {
    assert.deepEqual(requiredLiteral('abcd\\x{41')?.texts, ['abcd']);
    assert.deepEqual(requiredLiteral('abcd\\p{Greek')?.texts, ['abcd']);
    // No `:]` follows the `[:`, so it is a plain class and the literal after it stands.
    assert.deepEqual(requiredLiteral('[[:alpha:xyz]abcd')?.texts, ['abcd']);
  });

  it('marks (?i) literals and folds the line the way RE2 folds the pattern', () => {
    assert.deepEqual(requiredLiteral('(?i)Class'), { texts: ['class'], ignoreCase: true });
    assert.equal(foldForLiteral('CLAſS'), 'class');
    assert.equal(foldForLiteral('\u212Aelvin'), 'kelvin');
    for (const text of ['CLAſS', 'claſs', 'CLASS']) {
      assert.ok(npdMatches('(?i)class', text));
      assert.ok(compilePattern('(?i)class').exec(text), text);
    }
    assert.ok(compilePattern('(?i)kelvin').exec('\u212AELVIN'));
  });

  // Escapes that denote a character by code (\x, octal, \p) are not literal text: the characters after
  // them must not become part of the required literal.
  const ESCAPE_BUGS: readonly [string, string][] = [
    ['\\x1b\\[31mERROR', '\x1b[31mERROR'],
    ['\\x41bcd', 'Abcd'],
    ['\\101bcd', 'Abcd'],
    ['\\pLabcd', 'éabcd'],
  ];
  for (const [pattern, text] of ESCAPE_BUGS) {
    it(`${pattern} matches ${JSON.stringify(text)} as under RE2`, {}, () => {
      assert.ok(npdMatches(pattern, text));
      assert.ok(compilePattern(pattern).exec(text));
    });
  }

  it('x{(}abc)def matches "x{}abcdef" as under RE2 ("{" not followed by a repeat is a literal)', {}, () => {
    assert.ok(npdMatches('x{(}abc)def', 'x{}abcdef'));
    assert.ok(compilePattern('x{(}abc)def').exec('x{}abcdef'));
  });
});
