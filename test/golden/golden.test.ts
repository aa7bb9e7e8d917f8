/**
 * Golden tests: every directory under cases/ holds an input log, the monitor configs to run
 * (case.json) and the expected replay output (expected.jsonl). UPDATE_GOLDEN=1 rewrites the
 * expectations; review the diff before committing it.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runReplay } from '../../src/replay/command.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CASES = join(import.meta.dirname, 'cases');

interface CaseSpec {
  readonly configs: readonly string[];
  readonly format: 'kmsg' | 'plain' | 'journal-json';
  readonly bootTime?: string;
  /** Further replay flags, e.g. --subsystem-conditions. */
  readonly args?: readonly string[];
}

function run(dir: string): { stdout: string; stderr: string; code: number } {
  const spec = JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8')) as CaseSpec;
  const args = [...spec.configs.flatMap((c) => ['--config', join(ROOT, c)]), '--format', spec.format];
  if (spec.bootTime) args.push('--boot-time', spec.bootTime);
  args.push(...(spec.args ?? []));
  args.push(join(dir, 'input.log'));
  let stdout = '';
  let stderr = '';
  const code = runReplay(args, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    readStdin: () => '',
  });
  return { stdout, stderr, code };
}

for (const name of readdirSync(CASES).sort()) {
  const dir = join(CASES, name);
  test(`golden: ${name}`, () => {
    const { stdout, stderr, code } = run(dir);
    assert.equal(code, 0, stderr);
    const expectedFile = join(dir, 'expected.jsonl');
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(expectedFile)) {
      writeFileSync(expectedFile, stdout);
      if (process.env.UPDATE_GOLDEN !== '1')
        assert.fail(`wrote missing ${expectedFile}; review it and rerun`);
    }
    const expected = readFileSync(expectedFile, 'utf8');
    assert.deepEqual(lines(stdout), lines(expected));
  });
}

function lines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}
