// The release workflow (.github/workflows/release.yml) cannot run here; the command it runs can
// (release.test.ts). This checks the workflow itself with the real actionlint, and that actionlint
// does fail a broken copy of it (the negative control).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run } from '../e2e/harness/processes.ts';
import { REPO } from '../support/agent-process.ts';
import { ensureReleaseTools } from './tools.ts';

const WORKFLOW = join(REPO, '.github', 'workflows', 'release.yml');

describe('release workflow', () => {
  let actionlint: string;
  let dir: string;
  before(async () => {
    actionlint = (await ensureReleaseTools()).actionlint;
    dir = mkdtempSync(join(tmpdir(), 'npd-actionlint-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** actionlint on one workflow file, in a scratch repository so only that file is read. */
  const lint = async (text: string) => {
    mkdirSync(join(dir, '.github', 'workflows'), { recursive: true });
    const file = join(dir, '.github', 'workflows', 'release.yml');
    writeFileSync(file, text);
    return run(actionlint, ['-no-color', '-shellcheck=', '-pyflakes=', file]);
  };

  test('actionlint passes it', async () => {
    const r = await lint(readFileSync(WORKFLOW, 'utf8'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });

  test('actionlint fails it with an undefined expression', async () => {
    const broken = readFileSync(WORKFLOW, 'utf8').replace('github.ref_name }}', 'github.no_such }}');
    assert.notEqual(broken, readFileSync(WORKFLOW, 'utf8'), 'the workflow no longer names github.ref_name');
    const r = await lint(broken);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /no_such/);
  });

  test('it runs the release command the release test runs', () => {
    assert.match(readFileSync(WORKFLOW, 'utf8'), /npm run release -- --registry=/);
  });
});
