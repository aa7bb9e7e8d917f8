import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { runSeal } from '../../../src/diagnostics/seal-command.ts';
import {
  KEY_ANNOTATION,
  newUploadKey,
  SealError,
  sealUploadURL,
  uploadKeyFromPem,
} from '../../../src/diagnostics/sealed-url.ts';

const ZERO_KEY = `x25519:${Buffer.alloc(32).toString('base64url')}`;
const URL = 'https://bucket.s3.example/node-a.tar.gz?X-Amz-Credential=AKIA&X-Amz-Signature=0123abcd';

/** Re-encodes the sealed string with one base64url part changed by `change`. */
function tamper(sealed: string, index: number, change: (b: Buffer) => Buffer): string {
  const parts = sealed.split('.');
  parts[index] = change(Buffer.from(parts[index] ?? '', 'base64url')).toString('base64url');
  return parts.join('.');
}

function opening(fn: () => string): string {
  try {
    return `opened: ${fn()}`;
  } catch (err) {
    assert.ok(err instanceof SealError, `a SealError, not ${String(err)}`);
    return err.message;
  }
}

describe('sealed upload URLs', () => {
  it('open with the key and node they were sealed for, and hold no part of the URL in clear', () => {
    const key = newUploadKey();
    const sealed = sealUploadURL(URL, key.annotation, 'node-a');
    assert.match(sealed, /^npd-sealed-v1\.[0-9a-f]{16}(\.[\w-]+){4}$/);
    assert.equal(sealed.split('.')[1], key.kid);
    for (const piece of ['bucket', 'AKIA', '0123abcd']) assert.equal(sealed.includes(piece), false, piece);
    assert.equal(key.open(sealed, 'node-a'), URL);
    assert.notEqual(sealUploadURL(URL, key.annotation, 'node-a'), sealed, 'a new ephemeral key each time');
  });

  it('another node, another key, a changed byte or a malformed string never open', () => {
    const key = newUploadKey();
    const sealed = sealUploadURL(URL, key.annotation, 'node-a');
    assert.match(
      opening(() => key.open(sealed, 'node-b')),
      /could not be opened: it was sealed for another node/,
    );
    const other = newUploadKey();
    assert.match(
      opening(() => other.open(sealed, 'node-a')),
      new RegExp(`sealed to key ${key.kid}, but this node's agent has key ${other.kid}`),
    );
    const flip = (b: Buffer) => Buffer.from(b.map((x, i) => (i === 0 ? x ^ 1 : x)));
    for (const index of [2, 3, 4, 5])
      assert.match(
        opening(() => key.open(tamper(sealed, index, flip), 'node-a')),
        /could not be opened/,
        `part ${index}`,
      );
    assert.match(
      opening(() =>
        key.open(
          tamper(sealed, 3, (b) => b.subarray(1)),
          'node-a',
        ),
      ),
      /is damaged/,
    );
    for (const bad of [
      URL,
      sealed.replace('npd-sealed-v1', 'npd-sealed-v2'),
      sealed.split('.').slice(0, 5).join('.'),
    ])
      assert.match(
        opening(() => key.open(bad, 'node-a')),
        /is not a sealed upload URL/,
      );
  });

  it('a key survives its PEM; a PEM of another key type is refused', () => {
    const key = newUploadKey();
    const again = uploadKeyFromPem(key.pem);
    assert.equal(again.annotation, key.annotation);
    assert.equal(again.open(sealUploadURL(URL, key.annotation, 'n'), 'n'), URL);
    const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' });
    assert.throws(() => uploadKeyFromPem(String(ed)), /not an X25519 private key/);
  });

  it('sealing refuses a key that is not an annotation value', () => {
    for (const bad of ['', 'x25519:', `x25519:${Buffer.alloc(31).toString('base64url')}`, 'ed25519:AAAA'])
      assert.throws(() => sealUploadURL(URL, bad, 'n'), new RegExp(`not a ${KEY_ANNOTATION} value`), bad);
  });
});

describe('node-problem-detector seal', () => {
  const io = (stdin: string) => {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), readStdin: () => stdin },
    };
  };

  it('prints the stdin URL sealed for the node (through main.ts, as an operator runs it)', () => {
    const key = newUploadKey();
    const sealed = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'seal', `--node=node-a`, `--key=${key.annotation}`],
      { input: `${URL}\n`, encoding: 'utf8' },
    );
    assert.equal(key.open(sealed.trim(), 'node-a'), URL);
  });

  it('bad arguments exit 2 and say which', () => {
    const key = newUploadKey().annotation;
    const cases: [string[], string, RegExp][] = [
      [['--key', key], URL, /--node is required/],
      [['--node', 'n'], URL, /--key is required/],
      [['--node', 'n', '--key', key, URL], '', /read from stdin, not from an argument/],
      [['--node', 'n', '--key', key], 'ftp://x', /one http or https URL/],
      [['--node', 'n', '--key', 'nonsense'], URL, /^--key: the key is not a/],
      // 32 zero bytes have the annotation's form, but no key agreement works with them (issue 38 item 8).
      [['--node', 'n', '--key', ZERO_KEY], URL, /^--key: the key is not a usable X25519 public key/],
      // Two URLs are not sealed as one with a newline inside.
      [
        ['--node', 'n', '--key', key],
        `${URL}\n${URL}\n`,
        /^stdin must hold one URL on one line; it holds 2 lines/,
      ],
      [['--node', 'n', '--key', key], 'https://a b', /one http or https URL/],
    ];
    for (const [argv, stdin, want] of cases) {
      const r = io(stdin);
      assert.equal(runSeal(argv, r.io), 2, argv.join(' '));
      assert.match(r.err.join(''), want);
      assert.deepEqual(r.out, []);
    }
  });

  it('seals one URL with its line ending (LF or CRLF, blank lines around it) for a real key', () => {
    const key = newUploadKey();
    for (const stdin of [`${URL}\n`, `${URL}\r\n`, `\n${URL}\n\n`]) {
      const r = io(stdin);
      assert.equal(runSeal(['--node', 'n', '--key', key.annotation], r.io), 0, JSON.stringify(stdin));
      assert.deepEqual(r.err, []);
      assert.equal(key.open(r.out.join('').trim(), 'n'), URL);
    }
  });
});
