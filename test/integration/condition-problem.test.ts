// The running agent applies one polarity in both outputs (issue 39 item 3): every condition in
// /conditions carries problem and problemWhen, and npd_condition_problem has one series per type that
// agrees with it, for NPD's types (KernelDeadlock) and the subsystem types (KernelReady) alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startAgent, waitFor } from '../support/agent-process.ts';
import { parseExposition } from '../support/scrape.ts';

interface Published {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly problem: boolean;
  readonly problemWhen: string;
}

/** npd_condition_problem's series as type => { labels, value }. */
async function gauge(metricsUrl: string): Promise<Map<string, { labels: string; value: number }>> {
  const family = parseExposition(await (await fetch(metricsUrl)).text()).get('npd_condition_problem');
  const out = new Map<string, { labels: string; value: number }>();
  for (const s of family?.samples ?? []) {
    const type = /type="(\w+)"/.exec(s.series)?.[1] ?? '';
    assert.ok(!out.has(type), `one series per type: ${type} has two`);
    out.set(type, { labels: s.series, value: Number(s.value) });
  }
  return out;
}

test('standalone agent: /conditions and npd_condition_problem agree on every condition, both polarities', async () => {
  const agent = await startAgent(['--enable-k8s-exporter=false', '--subsystem-conditions=true']);
  try {
    const conditions = async () =>
      (await (await fetch(`${agent.statusUrl}/conditions`)).json()) as Published[];
    const ready = async () => {
      const types = (await conditions()).map((c) => c.type);
      const probed = (await gauge(agent.metricsUrl)).has('FilesystemSpaceLow');
      return probed && types.includes('KernelDeadlock') && types.includes('KernelReady');
    };
    await waitFor(ready, 15_000, agent.output);
    const published = await conditions();
    const series = await gauge(agent.metricsUrl);
    const polarities = new Set(published.map((c) => c.problemWhen));
    assert.deepEqual([...polarities].sort(), ['False', 'True'], 'both polarities are published');
    for (const c of published) {
      assert.equal(c.problemWhen, c.type.endsWith('Ready') ? 'False' : 'True', c.type);
      assert.equal(c.problem, c.status === c.problemWhen, `${c.type}=${c.status}`);
      const s = series.get(c.type);
      assert.ok(s, `${c.type} has a series`);
      assert.equal(
        s.labels,
        `npd_condition_problem{type="${c.type}",status="${c.status}",problem_when="${c.problemWhen}",reason="${c.reason}"}`,
      );
      assert.equal(s.value, c.problem ? 1 : 0, c.type);
    }
    // Conditions not written to the Node without --extra-conditions are in the gauge all the same.
    assert.ok(series.has('FilesystemSpaceLow'), 'a hidden condition has its series');
    assert.ok(!published.some((c) => c.type === 'FilesystemSpaceLow'), 'control: /conditions leaves it out');
  } finally {
    assert.equal(await agent.stop(), 0, 'SIGTERM exits cleanly');
  }
});
