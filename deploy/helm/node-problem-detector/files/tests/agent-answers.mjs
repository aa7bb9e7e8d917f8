// `helm test`: every agent behind the headless Service answers /healthz, /readyz and /metrics.
// Runs with the agent's image (node); NPD_TEST_HOST, NPD_TEST_STATUS_PORT, NPD_TEST_METRICS_PORT.
import { lookup } from 'node:dns/promises';

const host = process.env.NPD_TEST_HOST;
const [statusPort, metricsPort] = [process.env.NPD_TEST_STATUS_PORT, process.env.NPD_TEST_METRICS_PORT];
const get = async (url) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
};
let failed = 0;
const agents = await lookup(host, { all: true, family: 4 });
if (agents.length === 0) failed++;
for (const { address } of agents) {
  const checks = [
    [`http://${address}:${statusPort}/healthz`, (r) => r.status === 200],
    [`http://${address}:${statusPort}/readyz`, (r) => r.status === 200],
    [`http://${address}:${metricsPort}/metrics`, (r) => r.status === 200 && /^npd_build_info\{/m.test(r.body)],
  ];
  for (const [url, ok] of checks) {
    const r = await get(url).catch((err) => ({ status: 0, body: String(err) }));
    const pass = ok(r);
    if (!pass) failed++;
    console.log(`${pass ? 'ok  ' : 'FAIL'} ${url} ${r.status}${pass ? '' : ` ${r.body.slice(0, 200)}`}`);
  }
}
console.log(`${agents.length} agents, ${failed} failed checks`);
process.exitCode = failed === 0 ? 0 : 1;
