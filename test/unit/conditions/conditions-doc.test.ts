// docs/conditions.md lists every condition type the agent can write, with its polarity and owner. This
// keeps the table from rotting: a shipped config (rules/*.yaml, deploy/base/config/*.yaml) that declares
// a type the table lacks fails, as does a row nothing writes, a polarity other than problemWhen's, or
// an owner cell that does not name the declaring monitor's source and file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { declaredConditions } from '../../../src/conditions/owners.ts';
import { problemWhen, SUBSYSTEM_CONDITIONS } from '../../../src/core/polarity.ts';
import { loadShipped, ROOT, shippedConfigFiles } from '../../support/shipped-configs.ts';

interface Row {
  readonly type: string;
  readonly problemWhen: string;
  readonly owner: string;
}

/** The rows of the table under "## Every type the agent can write". */
function documentedRows(doc: string): Row[] {
  const section = doc.slice(doc.indexOf('## Every type the agent can write'));
  const table = section.split('\n\n').find((block) => block.startsWith('| condition |'));
  assert.ok(table, 'docs/conditions.md has the table');
  return table
    .split('\n')
    .slice(2)
    .map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      return {
        type: /^`(\w+)`$/.exec(cells[1] ?? '')?.[1] ?? `unparsed: ${line}`,
        problemWhen: cells[2]?.replaceAll('`', '') ?? '',
        owner: cells[3] ?? '',
      };
    });
}

/** Per declared type, the `source` and repository path of each shipped config declaring it. */
function declaredTypes(): Map<string, { source: string; file: string }[]> {
  const types = new Map<string, { source: string; file: string }[]>();
  for (const file of shippedConfigFiles()) {
    for (const loaded of loadShipped(file)) {
      const source = (loaded.config as { source: string }).source;
      for (const c of declaredConditions(loaded))
        types.set(c.type, [...(types.get(c.type) ?? []), { source, file }]);
    }
  }
  return types;
}

/** The problems of a table: a missing or extra row, a wrong polarity, an owner that is not named. */
function tableProblems(rows: readonly Row[], declared: Map<string, { source: string; file: string }[]>) {
  const problems: string[] = [];
  const subsystem = new Set(Object.values(SUBSYSTEM_CONDITIONS));
  const listed = new Set(rows.map((r) => r.type));
  for (const type of [...declared.keys(), ...subsystem])
    if (!listed.has(type)) problems.push(`${type}: declared but not in the table`);
  for (const row of rows) {
    const owners = declared.get(row.type);
    if (!owners && !subsystem.has(row.type)) problems.push(`${row.type}: in the table, written by nothing`);
    if (row.problemWhen !== problemWhen(row.type))
      problems.push(`${row.type}: polarity ${row.problemWhen}, problemWhen says ${problemWhen(row.type)}`);
    for (const o of owners ?? []) {
      if (!row.owner.includes(`\`${o.source}\``)) problems.push(`${row.type}: owner lacks \`${o.source}\``);
      if (!row.owner.includes(`\`${o.file}\``)) problems.push(`${row.type}: owner lacks \`${o.file}\``);
    }
  }
  if (listed.size !== rows.length) problems.push('a type has two rows');
  return problems;
}

describe('docs/conditions.md: every condition type the agent can write', () => {
  const doc = readFileSync(join(ROOT, 'docs/conditions.md'), 'utf8');
  const declared = declaredTypes();

  it('lists each declared and subsystem type once, with its polarity and owner', () => {
    assert.ok(declared.size > 30, `control: the shipped configs were read (${declared.size} types)`);
    assert.deepEqual(tableProblems(documentedRows(doc), declared), []);
  });

  it('fails for a type a rules file declares and the table lacks (negative control)', () => {
    const withNew = new Map(declared);
    withNew.set('BrandNewProblem', [{ source: 'kernel-monitor', file: 'rules/kernel.yaml' }]);
    assert.deepEqual(tableProblems(documentedRows(doc), withNew), [
      'BrandNewProblem: declared but not in the table',
    ]);
  });

  it('fails for a wrong polarity and for an owner cell that names another file (negative controls)', () => {
    const flipped = doc.replace('| `KernelReady` | `False` |', '| `KernelReady` | `True` |');
    assert.notEqual(flipped, doc, 'control: the row was found');
    assert.deepEqual(tableProblems(documentedRows(flipped), declared), [
      'KernelReady: polarity True, problemWhen says False',
    ]);
    const moved = doc.replace(
      '| `readonly-monitor`, `rules/readonly.yaml` |',
      '| `readonly-monitor`, `rules/kernel.yaml` |',
    );
    assert.notEqual(moved, doc, 'control: the row was found');
    assert.deepEqual(tableProblems(documentedRows(moved), declared), [
      'ReadonlyFilesystem: owner lacks `rules/readonly.yaml`',
    ]);
  });
});
