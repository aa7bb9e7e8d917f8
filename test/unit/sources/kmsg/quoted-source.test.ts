/**
 * The kmsg source marks the spans a record quotes from user space on every line it delivers, and
 * --trust-quoted-text (SourceDeps.trustQuotedText) turns that off: NPD's matching, every word evidence.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { LogLine } from '../../../../src/core/types.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { createKmsgSource } from '../../../../src/sources/kmsg/source.ts';
import { FakeKmsgDevice } from '../../../support/fake-kmsg-device.ts';

const HUNG = 'INFO: task docker:20744 blocked for more than 120 seconds.';
const PLAIN = 'EXT4-fs (sda1): Remounting filesystem read-only';

function read(trustQuotedText: boolean | undefined): LogLine[] {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const device = new FakeKmsgDevice();
  device.write(HUNG);
  device.write(PLAIN);
  const config = {
    file: 'k.yaml',
    source: 'kernel-monitor',
    pluginConfig: {},
    logPath: '',
    lookbackMs: 3_600_000,
    delayMs: 0,
  };
  const deps = { clock, logger: silentLogger(), registry: createRegistry(), paths: hostPaths('/') };
  const source = createKmsgSource(
    config,
    { ...deps, trustQuotedText },
    {
      device,
      fs: { readFileSync: () => '1000.00 1800.50\n' },
    },
  );
  const lines: LogLine[] = [];
  source.start((batch) => lines.push(...batch));
  clock.advance(0);
  void source.stop();
  return lines;
}

describe('kmsg source and quoted spans', () => {
  it("marks a hung task's name, and nothing on a record that quotes nothing", () => {
    const lines = read(undefined);
    assert.deepEqual(
      lines.map((l) => l.quoted),
      [[[11, 17]], undefined],
    );
  });

  it('--trust-quoted-text delivers the records unmarked', () => {
    const lines = read(true);
    assert.deepEqual(
      lines.map((l) => [l.message, l.quoted]),
      [
        [HUNG, undefined],
        [PLAIN, undefined],
      ],
    );
  });
});
