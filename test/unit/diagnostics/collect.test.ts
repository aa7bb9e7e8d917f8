import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import {
  type BundlePart,
  collectBundle,
  type PartOutput,
  tailBytes,
} from '../../../src/diagnostics/collect.ts';
import { eventLoopTurnsDuring } from '../../support/event-loop-turns.ts';

function part(name: string, text: string, maxBytes = 1 << 20): BundlePart & { budgets: number[] } {
  const budgets: number[] = [];
  return {
    name,
    maxBytes,
    budgets,
    read: async (budget) => {
      budgets.push(budget);
      return { text };
    },
  };
}

const fixed = (name: string, out: PartOutput | Error): BundlePart => ({
  name,
  maxBytes: 1 << 20,
  read: async () => {
    if (out instanceof Error) throw out;
    return out;
  },
});

describe('collectBundle limits', () => {
  it('gives each part what is left of maxBytes, cuts to the newest bytes and skips the rest', async () => {
    const a = part('a.txt', 'x'.repeat(600));
    const b = part('b.txt', `${'old '.repeat(200)}NEWEST`);
    const c = part('c.txt', 'never read');
    const bundle = await collectBundle([a, b, c], { maxBytes: 1000, timeoutMs: 60_000 }, new FakeClock());
    assert.deepEqual(a.budgets, [1000]);
    assert.deepEqual(b.budgets, [400]);
    assert.deepEqual(c.budgets, [], 'no budget left: not even read');
    assert.equal(bundle.contentBytes, 1000);
    const bText = bundle.files.find((f) => f.name === 'b.txt')?.data.toString() ?? '';
    assert.equal(bText.length, 400);
    assert.ok(bText.endsWith('NEWEST'), 'the tail is kept');
    assert.deepEqual(
      bundle.parts.map((p) => [p.name, p.status, p.bytes]),
      [
        ['a.txt', 'ok', 600],
        ['b.txt', 'truncated', 400],
        ['c.txt', 'skipped', 0],
      ],
    );
  });

  it('a part never gets more than its own cap', async () => {
    const a = part('a.txt', `${'y'.repeat(9)}\n`.repeat(5), 10);
    const bundle = await collectBundle([a], { maxBytes: 1000, timeoutMs: 60_000 }, new FakeClock());
    assert.deepEqual(a.budgets, [10]);
    assert.equal(bundle.contentBytes, 10);
    assert.equal(bundle.parts[0]?.status, 'truncated');
  });

  it('records absent and failed parts without failing the bundle, redacting error messages', async () => {
    const bundle = await collectBundle(
      [
        fixed('journal.log', { absent: 'no journal directory' }),
        fixed('boom.txt', new Error('read failed: password=hunter2')),
        fixed('ok.txt', { text: 'fine\n' }),
      ],
      { maxBytes: 1000, timeoutMs: 60_000 },
      new FakeClock(),
    );
    assert.deepEqual(bundle.parts, [
      { name: 'journal.log', status: 'absent', bytes: 0, note: 'no journal directory' },
      { name: 'boom.txt', status: 'error', bytes: 0, note: 'read failed: password=[REDACTED]' },
      { name: 'ok.txt', status: 'ok', bytes: 5 },
    ]);
    assert.deepEqual(
      bundle.files.map((f) => f.name),
      ['ok.txt'],
    );
  });

  it('abandons a part still running at the time limit and skips the parts after it', async () => {
    const clock = new FakeClock();
    const hung: BundlePart = { name: 'hung.txt', maxBytes: 100, read: () => new Promise(() => {}) };
    const pending = collectBundle(
      [hung, part('late.txt', 'late')],
      { maxBytes: 1000, timeoutMs: 5_000 },
      clock,
    );
    await new Promise((r) => setImmediate(r));
    clock.advance(4_999);
    await new Promise((r) => setImmediate(r));
    clock.advance(1);
    const bundle = await pending;
    assert.deepEqual(
      bundle.parts.map((p) => [p.name, p.status, p.note]),
      [
        ['hung.txt', 'error', 'time limit reached'],
        ['late.txt', 'skipped', 'time limit reached before this part'],
      ],
    );
  });

  it('redacts before cutting, so a credential cannot survive by being cut in half', async () => {
    const text = `start Authorization: Bearer abcdefghijklmnop end`;
    const bundle = await collectBundle(
      [part('k.txt', text)],
      { maxBytes: 1000, timeoutMs: 1000 },
      new FakeClock(),
    );
    assert.equal(bundle.files[0]?.data.toString(), 'start Authorization: Bearer [REDACTED] end');
  });

  it('serves the event loop while it redacts a large part (the health probe keeps answering)', async () => {
    const text = 'kubelet: password=hunter2 and some more words on this line\n'.repeat(40_000);
    const { result: bundle, turns } = await eventLoopTurnsDuring(() =>
      collectBundle(
        [part('big.txt', text, 4 << 20)],
        { maxBytes: 4 << 20, timeoutMs: 60_000 },
        new FakeClock(),
      ),
    );
    assert.equal(bundle.parts[0]?.status, 'ok');
    assert.equal(bundle.files[0]?.data.toString().includes('hunter2'), false);
    assert.ok(turns >= 10, `the event loop ran ${turns} times during the collection`);
  });

  it('stops redacting at the time limit and skips the parts after it', async () => {
    const clock = new FakeClock();
    const text = 'token=abc and more text to redact on every line\n'.repeat(20_000);
    let chunks = 0;
    const yieldNow = async () => {
      chunks++;
      clock.advance(1_000);
    };
    const bundle = await collectBundle(
      [part('slow.txt', text, 4 << 20), part('late.txt', 'late')],
      { maxBytes: 8 << 20, timeoutMs: 5_000 },
      clock,
      yieldNow,
    );
    assert.deepEqual(
      bundle.parts.map((p) => [p.name, p.status, p.note]),
      [
        ['slow.txt', 'error', 'time limit reached'],
        ['late.txt', 'skipped', 'time limit reached before this part'],
      ],
    );
    assert.equal(chunks, 5, 'no chunk is redacted after the deadline');
  });

  it("redacts at most twice a part's cap, cut on a line, whatever the part returns", async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, '0')} xxxxxxxxxx\n`);
    const big = part('events.json', lines.join(''), 200);
    const bundle = await collectBundle([big], { maxBytes: 1 << 20, timeoutMs: 60_000 }, new FakeClock());
    const out = bundle.files[0]?.data.toString() ?? '';
    assert.ok(out.length <= 200);
    assert.ok(out.startsWith('line ') && out.endsWith('line 0999 xxxxxxxxxx\n'), out);
    assert.equal(bundle.parts[0]?.status, 'truncated');
  });

  it('tailBytes keeps whole lines; strict drops a last line longer than the limit', () => {
    assert.deepEqual(tailBytes('password=a\nb\n', 6), { text: 'b\n', cut: true });
    assert.deepEqual(tailBytes('aaaaaaaa', 4), { text: 'aaaa', cut: true });
    assert.deepEqual(tailBytes('aaaaaaaa', 4, true), { text: '', cut: true });
    assert.deepEqual(tailBytes('x\naaaaaaaa\n', 4, true), { text: '', cut: true });
  });

  it('tailBytes never splits a UTF-8 character', () => {
    assert.deepEqual(tailBytes('aé', 1), { text: '', cut: true });
    assert.deepEqual(tailBytes('aé', 2), { text: 'é', cut: true });
    assert.deepEqual(tailBytes('aé', 3), { text: 'aé', cut: false });
  });
});
