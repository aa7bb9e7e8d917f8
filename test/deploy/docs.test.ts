// Keeps the deployment docs true to the code: every metric and flag is documented (and nothing that does
// not exist), YAML examples parse, the install example patch renders, numbers match the manifests, and
// relative links resolve.
//   node --import tsx --test test/deploy/docs.test.ts
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { FLAGS } from '../../src/config/options.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const KUBECTL = '/usr/bin/kubectl';
const DOCS = ['install.md', 'migration-from-npd.md', 'consumers.md', 'metrics.md', 'troubleshooting.md'];
const read = (doc: string): string => readFileSync(join(ROOT, 'docs', doc), 'utf8');

function registeredMetrics(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) {
        for (const m of readFileSync(p, 'utf8').matchAll(/'((?:npd|problem)_[a-z0-9_]+)'/g)) names.add(m[1]!);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return names;
}

interface Rendered {
  kind: string;
  data?: Record<string, string>;
  spec?: { template: { spec: { containers: { args: string[] }[] } } };
}

/** Fenced blocks of one language. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
}

describe('deployment docs', () => {
  test('docs/metrics.md documents every metric the agent registers, and no other', () => {
    const text = read('metrics.md');
    const known = registeredMetrics();
    assert.ok(known.size > 20, 'metric scan works');
    const documented = new Set([...text.matchAll(/`((?:npd|problem)_[a-z0-9_]+)`/g)].map((m) => m[1]!));
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

  test('the args patch in install.md renders and names files of the rules ConfigMap', {
    skip: existsSync(KUBECTL) ? false : 'no kubectl',
  }, () => {
    const patchBlock = blocks(read('install.md'), 'yaml').find((b) => b.startsWith('patches:'));
    assert.ok(patchBlock, 'install.md has a patches: example');
    const dir = mkdtempSync(join(tmpdir(), 'npd-docs-'));
    try {
      const kustomization = [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ${relative(dir, join(ROOT, 'deploy/base'))}`,
        patchBlock,
      ].join('\n');
      writeFileSync(join(dir, 'kustomization.yaml'), kustomization);
      const out = execFileSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8' });
      const docs = parseAllDocuments(out).map((d) => d.toJS() as Rendered);
      const ds = docs.find((d) => d.kind === 'DaemonSet')!;
      const args = ds.spec!.template.spec.containers[0]!.args;
      const logArg = args.find((a) => a.startsWith('--config.system-log-monitor='));
      assert.ok(logArg?.includes('/config/containerd.yaml'), `patched args: ${args.join(' ')}`);
      assert.ok(logArg);
      assert.ok(
        args.some((a) => a.startsWith('--config.probe-monitor=')),
        'the probe monitor arg is untouched',
      );
      const keys = docs.filter((d) => d.kind === 'ConfigMap').flatMap((d) => Object.keys(d.data ?? {}));
      for (const f of logArg.slice(logArg.indexOf('=') + 1).split(',')) {
        assert.ok(keys.includes(f.replace('/config/', '')), `${f} is in the ConfigMaps`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
