/**
 * `npm run bench`: prints measured numbers and asserts nothing. BENCHMARKS.md records the results.
 */
import { adversarialWorstCases, mixedLogNsPerLine } from './rule-engine.bench.ts';

const mixed = mixedLogNsPerLine();
console.log('## Rule engine (shipped kernel + readonly rules)');
console.log(
  `mixed kernel log: ${mixed.nsPerLine.toFixed(0)} ns/line over ${mixed.lines} lines, ${mixed.rules} rules, ${mixed.problems} lines matched (target <= 200 ns/line; NPD Go ~1700 ns/line)`,
);
const worst = adversarialWorstCases();
const total = worst.reduce((s, w) => s + w.ms, 0);
console.log(
  `64 KiB non-matching line, worst of 5 adversarial shapes per rule (target <= 5 ms for all rules together):`,
);
for (const w of worst)
  console.log(`  ${w.ms.toFixed(3).padStart(8)} ms  ${w.reason.padEnd(30)} ${w.pattern}`);
console.log(`  ${total.toFixed(3).padStart(8)} ms  all rules together`);
