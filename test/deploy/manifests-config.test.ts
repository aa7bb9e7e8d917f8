// Client-side checks of the ConfigMaps in deploy/base: the rules ConfigMap is the repository's rules/
// (through the byte-identical copies in deploy/base/rules/), the deployment ConfigMap is
// deploy/base/config/, and the DaemonSet mounts both at /config.
//   node --import tsx --test test/deploy/manifests-config.test.ts
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { configSources, one, ROOT, renderBase, ruleFiles, kubectlSkip as skip } from './support.ts';

describe('deploy/ kustomize: ConfigMaps', { skip }, () => {
  const base = skip ? [] : renderBase();

  test('deploy/base/rules/ holds byte-identical copies of rules/*.yaml (deploy/sync-rules.sh)', () => {
    const copies = readdirSync(join(ROOT, 'deploy/base/rules'))
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .sort();
    assert.deepEqual(copies, ruleFiles(), 'run deploy/sync-rules.sh');
    for (const f of ruleFiles()) {
      const a = readFileSync(join(ROOT, 'rules', f));
      const b = readFileSync(join(ROOT, 'deploy/base/rules', f));
      assert.ok(a.equals(b), `deploy/base/rules/${f} differs from rules/${f}: run deploy/sync-rules.sh`);
    }
    execFileSync('bash', [join(ROOT, 'deploy/sync-rules.sh'), '--check'], { stdio: 'pipe' });
  });

  test('the rules ConfigMap data equals the files in rules/', () => {
    const cms = base.filter(
      (d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('node-problem-detector-rules-'),
    );
    assert.equal(cms.length, 1);
    const cm = cms[0]!;
    assert.match(
      cm.metadata.name,
      /^node-problem-detector-rules-[a-z0-9]+$/,
      'hash-suffixed, so a rules change rolls the pods',
    );
    const data = cm.data as Record<string, string>;
    assert.deepEqual(Object.keys(data).sort(), ruleFiles());
    for (const f of ruleFiles()) assert.equal(data[f], readFileSync(join(ROOT, 'rules', f), 'utf8'), f);
    const sources = configSources(one(base, 'DaemonSet'));
    assert.ok(sources.includes(cm.metadata.name), 'the DaemonSet mounts the generated ConfigMap');
  });

  test('the deployment ConfigMap holds deploy/base/config/, mounted beside the rules at /config', () => {
    const cm = base.find(
      (d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('node-problem-detector-config-'),
    );
    assert.ok(cm, 'node-problem-detector-config ConfigMap');
    const data = cm.data as Record<string, string>;
    const files = readdirSync(join(ROOT, 'deploy/base/config')).sort();
    assert.deepEqual(Object.keys(data).sort(), files);
    for (const f of files) assert.equal(data[f], readFileSync(join(ROOT, 'deploy/base/config', f), 'utf8'));
    for (const f of files)
      assert.ok(!ruleFiles().includes(f), `${f} must not shadow a rules/ file at /config`);
    assert.deepEqual(
      configSources(one(base, 'DaemonSet')).sort(),
      base
        .filter((d) => d.kind === 'ConfigMap')
        .map((d) => d.metadata.name)
        .sort(),
    );
  });

  test('deploy/base/config/probes-daemonset.yaml is rules/probes.yaml minus conntrack, disk/inodes on /var/log', () => {
    const load = (p: string) =>
      parseYaml(readFileSync(join(ROOT, p), 'utf8')) as {
        probes: { kind: string; paths?: string[] }[];
        [k: string]: unknown;
      };
    const shipped = load('rules/probes.yaml');
    const pod = load('deploy/base/config/probes-daemonset.yaml');
    const { probes: shippedProbes, ...shippedTop } = shipped;
    const { probes: podProbes, ...podTop } = pod;
    assert.deepEqual(podTop, shippedTop, 'same source, interval, splay, timeout, conditions');
    const expected = shippedProbes
      .filter((p) => p.kind !== 'conntrack')
      .map((p) => (p.kind === 'disk' || p.kind === 'inodes' ? { ...p, paths: ['/var/log'] } : p));
    assert.deepEqual(podProbes, expected);
  });
});
