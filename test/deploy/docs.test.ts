// Keeps the deployment docs true to the code: every metric and flag is documented (and nothing that does
// not exist), YAML examples parse, the install example patch renders, numbers match the manifests, and
// relative links resolve.
//   node --import tsx --test test/deploy/docs.test.ts
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { FLAGS } from '../../src/agent/options.ts';
import {
  agentContainer,
  configMapData,
  kubectlSkip,
  kustomizeBase,
  one,
  ROOT,
  registeredLabelNames,
  registeredMetricNames,
} from './support.ts';

const DOCS = [
  'install.md',
  'migration-from-npd.md',
  'consumers.md',
  'metrics.md',
  'troubleshooting.md',
  'diagnostics.md',
];
const read = (doc: string): string => readFileSync(join(ROOT, 'docs', doc), 'utf8');

/** Fenced blocks of one language. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
}

describe('deployment docs', () => {
  test('docs/metrics.md documents every metric the agent registers, and no other', () => {
    const text = read('metrics.md');
    const known = registeredMetricNames();
    assert.ok(known.size > 20, 'metric scan works');
    const labels = registeredLabelNames();
    const documented = new Set(
      [...text.matchAll(/`((?:npd|problem)_[a-z0-9_]+)`/g)].map((m) => m[1]!).filter((n) => !labels.has(n)),
    );
    const rows = new Set([...text.matchAll(/^\| `((?:npd|problem)_[a-z0-9_]+)` \|/gm)].map((m) => m[1]!));
    for (const name of known) assert.ok(rows.has(name), `${name} has no row in docs/metrics.md`);
    for (const name of documented)
      assert.ok(known.has(name), `docs/metrics.md names ${name}, which src/ does not register`);
  });

  test('docs/migration-from-npd.md covers every flag', () => {
    const text = read('migration-from-npd.md');
    for (const f of FLAGS)
      assert.ok(text.includes(`\`--${f.name}\``), `--${f.name} is not in the migration guide`);
    const mentioned = [...text.matchAll(/`--([a-z][a-z0-9.-]*)[`=]/g)].map((m) => m[1]!);
    const names = new Set(FLAGS.map((f) => f.name));
    for (const m of mentioned)
      assert.ok(names.has(m), `the migration guide names --${m}, which the agent does not accept`);
  });

  test('YAML examples parse', () => {
    for (const doc of DOCS) {
      for (const [i, y] of blocks(read(doc), 'yaml').entries()) {
        const docs = parseAllDocuments(y);
        for (const d of docs)
          assert.deepEqual(
            d.errors.map((e) => e.message),
            [],
            `${doc} yaml block ${i}`,
          );
      }
    }
  });

  test('relative links resolve', () => {
    for (const doc of DOCS) {
      for (const m of read(doc).matchAll(/\]\(([^)#:\s]+)(#[^)]*)?\)/g)) {
        const target = resolve(join(ROOT, 'docs'), m[1]!);
        assert.ok(existsSync(target), `${doc}: link ${m[1]} -> ${relative(ROOT, target)} does not exist`);
      }
    }
  });

  test('install.md quotes the DaemonSet resources and heap cap', () => {
    const text = read('install.md');
    const ds = readFileSync(join(ROOT, 'deploy/base/daemonset.yaml'), 'utf8');
    for (const [k, v] of [
      ['requests cpu', /requests:\s*\n\s*cpu: (\S+)/],
      ['requests memory', /requests:\s*\n\s*cpu: \S+\s*\n\s*memory: (\S+)/],
      ['limits cpu', /limits:\s*\n\s*cpu: (\S+)/],
      ['limits memory', /limits:\s*\n\s*cpu: \S+\s*\n\s*memory: (\S+)/],
      ['heap cap', /(--max-old-space-size=\d+)/],
    ] as const) {
      const value = v.exec(ds)?.[1];
      assert.ok(value, `${k} in daemonset.yaml`);
      assert.ok(text.includes(value), `install.md does not mention ${k} ${value}`);
    }
  });

  test('the components example in install.md renders and names files of the rules ConfigMap', {
    skip: kubectlSkip,
  }, () => {
    const block = blocks(read('install.md'), 'yaml').find((b) => b.startsWith('components:'));
    assert.ok(block, 'install.md has a components: example');
    const names = [...block.matchAll(/^\s+- \.\.\/\.\.\/components\/([a-z-]+)$/gm)].map((m) => m[1]!);
    assert.ok(names.length > 0, block);
    const docs = kustomizeBase((fromTmp) => [
      'components:',
      ...names.map((n) => `  - ${fromTmp(`deploy/components/${n}`)}`),
    ]);
    const args = agentContainer(one(docs, 'DaemonSet')).args;
    const files = args
      .filter((a) => a.startsWith('--config.'))
      .flatMap((a) => a.slice(a.indexOf('=') + 1).split(','));
    assert.ok(files.includes('/config/containerd.yaml'), `args: ${args.join(' ')}`);
    const keys = Object.keys(configMapData(docs));
    for (const f of files) assert.ok(keys.includes(f.replace('/config/', '')), `${f} is in the ConfigMaps`);
  });
});
