/**
 * A cut inside a key name (issue 38 item 12): a journal excerpt cut at its head inside `password=` left
 * `word=hunter2SECRET`, a value without the key that marks it. Two things keep that from happening, and
 * each is tried here at every cut position: the journal part drops the partial first line of a tail that
 * journalctl's output was cut to (parts.ts), and the bundle redacts a part before it cuts it to the
 * budget (collect.ts). Every secret below ends in SECRET, which must never reach a bundle.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { type BundlePart, collectBundle } from '../../../src/diagnostics/collect.ts';
import { bundleParts } from '../../../src/diagnostics/parts.ts';
import { hostPaths } from '../../../src/host/paths.ts';

const dir = mkdtempSync(join(tmpdir(), 'npd-cut-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** kubelet logs a failed CIFS mount with its options (pkg/volume/util, mount error output). */
const LINE =
  'kubelet[812]: mount error: mount -t cifs -o username=svc,password=hunter2SECRET //fs/share /mnt';
const NEXT = 'kubelet[812]: retrying the mount in 2s';

/** A stand-in journalctl that prints the mount failure, then one more line. */
function journalctl(): string {
  const file = join(dir, 'journalctl');
  writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' '${LINE}' '${NEXT}'\n`);
  chmodSync(file, 0o755);
  return file;
}

function kubeletPart(): BundlePart {
  const src = {
    paths: hostPaths('/hostroot'),
    clock: new FakeClock(Date.UTC(2026, 11, 4)),
    journalctl: journalctl(),
    conditions: () => [],
    events: () => [],
    metrics: async () => '',
    listDir: (p: string) => (p === '/hostroot/var/log/journal' ? ['machine-id'] : undefined),
  };
  return bundleParts(src, 60).find((p) => p.name === 'journal/kubelet.log') as BundlePart;
}

const bundleText = async (parts: BundlePart[], maxBytes: number) => {
  const b = await collectBundle(parts, { maxBytes, timeoutMs: 60_000 }, new FakeClock());
  return b.files.map((f) => f.data.toString('utf8')).join('');
};

describe('a cut never leaves a value without its key', () => {
  it('a journal excerpt cut at any byte of its first line keeps no part of the secret', async () => {
    const part = kubeletPart();
    const whole = `${LINE}\n${NEXT}\n`;
    const leaks: string[] = [];
    // Every budget from "only the last line fits" to "everything but the first byte fits".
    for (let budget = NEXT.length + 1; budget < whole.length; budget++) {
      const text = await bundleText([part], budget);
      if (text.includes('SECRET')) leaks.push(`${budget}: ${JSON.stringify(text)}`);
    }
    assert.deepEqual(leaks, []);
    // The cut the issue names: the budget starts inside "password", at "word=hunter2SECRET".
    const cut = whole.slice(whole.indexOf('word=hunter2SECRET'));
    assert.equal(await bundleText([part], Buffer.byteLength(cut)), `${NEXT}\n`, 'the later line is kept');
  });

  it('control: the uncut excerpt keeps both lines, the value masked because its key is whole', async () => {
    const text = await bundleText([kubeletPart()], 10_000);
    assert.equal(text, `${LINE.replace('hunter2SECRET', '[REDACTED]')}\n${NEXT}\n`);
  });

  it('a part longer than its budget is redacted before it is cut, at every cut position', async () => {
    // One line, as an events.json string or a metrics label holds it: no line to drop, the cut lands
    // inside it. Cut first, "word=hunter2SECRET" would be redacted no more.
    const line = `{"message":"mount -o username=svc,password=hunter2SECRET failed"}`;
    const part: BundlePart = { name: 'events.json', maxBytes: 1 << 20, read: async () => ({ text: line }) };
    const leaks: string[] = [];
    for (let budget = 1; budget < line.length; budget++) {
      const text = await bundleText([part], budget);
      if (text.includes('SECRET')) leaks.push(`${budget}: ${JSON.stringify(text)}`);
    }
    assert.deepEqual(leaks, []);
    const kept = await bundleText([part], '=[REDACTED] failed"}'.length + 4);
    assert.equal(kept, 'word=[REDACTED] failed"}', 'the cut inside "password" keeps the mask');
  });
});
