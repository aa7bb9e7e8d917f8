/**
 * The journald source asks journalctl for the writer's fields and marks each entry its config does not
 * trust (LogLine.untrusted), on the entries recorded from a real journald (writers.jsonl: smartd's
 * line as root in smartd.service, then the same text from `logger -t smartd` as uid 65534).
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FakeClock } from '../../../../src/core/clock.ts';
import type { LogLine } from '../../../../src/core/types.ts';
import type { TrustedWriter } from '../../../../src/rules/config.ts';
import { createJournaldSource } from '../../../../src/sources/journald/source.ts';
import { logConfig, MINUTE, makeDeps, tempDir, waitFor } from '../harness.ts';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/journal/', import.meta.url));
/** A minute after the recorded entries. */
const NOW = 1_796_418_160_000;

async function read(t: TestContext, trustedWriter: TrustedWriter | undefined) {
  const root = tempDir(t);
  const dir = join(root, 'var/log/journal');
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(FIXTURES, 'writers.jsonl'), join(dir, 'entries.jsonl'));
  const config = logConfig({ pluginConfig: { source: 'smartd' }, lookbackMs: 60 * MINUTE, trustedWriter });
  const source = createJournaldSource(config, makeDeps(new FakeClock(NOW), root), {
    command: join(FIXTURES, 'fake-journalctl.mjs'),
    fs: { readFileSync: () => '100000.00 1.00\n' },
  });
  const lines: LogLine[] = [];
  t.after(() => source.stop());
  source.start((batch) => lines.push(...batch));
  await waitFor(() => lines.length === 2, 5000, 'the two smartd entries');
  const argv = JSON.parse(readFileSync(join(dir, 'argv.log'), 'utf8').split('\n')[0] as string) as string[];
  return { lines, fieldsArg: argv.find((a) => a.startsWith('--output-fields=')) };
}

const SMART = 'Device: /dev/sda [SAT], FAILED SMART self-check. BACK UP DATA NOW!';

it("marks the entry whose writer fails the config's trustedWriter, and asks journalctl for the fields; the trusted one says who wrote it", async (t) => {
  const smartd = { _SYSTEMD_UNIT: ['smartd.service', 'smartmontools.service'], _UID: ['0'] };
  const { lines, fieldsArg } = await read(t, smartd);
  assert.equal(fieldsArg, '--output-fields=MESSAGE,_TRANSPORT,_SYSTEMD_UNIT,_UID,_COMM,_EXE,_PID');
  assert.deepEqual(lines, [
    // The trusted fields journald stamped, for the evidence of what the entry raises (core/evidence.ts).
    {
      timestamp: 1_796_418_099_728,
      message: SMART,
      writer: { transport: 'stdout', unit: 'smartd.service', uid: '0', comm: 'cat' },
    },
    {
      timestamp: 1_796_418_099_784,
      message: SMART,
      untrusted:
        '_TRANSPORT=syslog _SYSTEMD_UNIT=- _UID=65534 _COMM=logger _PID=441 fails trustedWriter _SYSTEMD_UNIT=smartd.service|smartmontools.service',
    },
  ]);
});

it('trustedWriter any (or a config built without the schema): no fields asked, nothing marked', async (t) => {
  for (const policy of ['any', undefined] as const) {
    const { lines, fieldsArg } = await read(t, policy);
    assert.equal(fieldsArg, '--output-fields=MESSAGE');
    assert.deepEqual(
      lines.map((l) => l.untrusted),
      [undefined, undefined],
    );
  }
});
