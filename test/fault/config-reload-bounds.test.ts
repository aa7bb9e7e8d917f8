// Hot reload (--config-reload-period=1s) against configs a careless operator or a hostile node writes,
// on a real agent: a filelog config that only failed once its monitor was built ('(unclosed' message
// regex, no logPath), the config path swapped by symlink to /dev/zero and to a FIFO, and a YAML alias
// bomb. Each is a rejected reload (npd_config_last_reload_successful 0, failure counted), /healthz keeps
// answering, the running filelog monitor keeps reading, and reverting the file applies again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { faultSuite, healthz, markedNames, metricOf, temporaryRule, untilEvent, waitFor } from './support.ts';

const { id, source } = markedNames('bounds');
let logFile: string;
let real: string;
let link: string;

const PLUGIN_CONFIG = {
  timestamp: '^(\\S+)',
  message: '^\\S+ (.*)',
  timestampFormat: '2006-01-02T15:04:05.999999999Z07:00',
};

function filelogConfig(override: Record<string, unknown> = {}): string {
  return stringify({
    plugin: 'filelog',
    logPath: logFile,
    source,
    pluginConfig: PLUGIN_CONFIG,
    // The test's own file: its writer is the test (a log file names none; docs/rules.md).
    trustedWriter: 'any',
    rules: [temporaryRule('FileRule', `${id}: file rule (\\d+)`)],
    ...override,
  });
}

/** Points the config path (a symlink, as a ConfigMap's is) at `target`, atomically. */
function swapLink(target: string): void {
  const tmp = `${link}.tmp`;
  symlinkSync(target, tmp);
  renameSync(tmp, link);
}

const s = faultSuite({
  configs: (dir) => {
    logFile = join(dir, 'app.log');
    writeFileSync(logFile, '');
    real = join(dir, 'filelog-real.yaml');
    writeFileSync(real, filelogConfig());
    link = join(dir, 'filelog.yaml');
    symlinkSync(real, link);
    return [link];
  },
  flags: ['--config-reload-period=1s'],
});

const metric = (name: string, ...labels: string[]) => metricOf(s.agent, name, ...labels);
const failures = () => metric('npd_config_reloads_total', 'result="failure"');
const successes = () => metric('npd_config_reloads_total', 'result="success"');
let lineNo = 0;

/** Appends a matching line and waits until the running filelog monitor turned it into an Event. */
async function stillReads(): Promise<void> {
  lineNo++;
  appendFileSync(logFile, `${new Date().toISOString()} ${id}: file rule ${lineNo}\n`);
  await waitFor(
    async () => (await metric('problem_counter', 'reason="FileRule"')) === lineNo,
    30_000,
    s.agent.output,
  );
}

async function rejected(n: number, what: string): Promise<void> {
  await waitFor(async () => (await failures()) === n, 30_000, s.agent.output);
  assert.equal(await metric('npd_config_last_reload_successful'), 0, what);
  assert.equal(await healthz(s.agent), 200, `${what}: /healthz still answers`);
  await stillReads();
}

test('every bad reload is refused whole; the running filelog monitor keeps reading', {
  timeout: 240_000,
}, async () => {
  const { agent } = s;
  await stillReads();
  await untilEvent(s, source, 'FileRule', 30_000);

  writeFileSync(real, filelogConfig({ pluginConfig: { ...PLUGIN_CONFIG, message: '(unclosed' } }));
  await rejected(1, 'invalid message regex');
  writeFileSync(real, filelogConfig({ logPath: undefined }));
  await rejected(2, 'missing logPath');
  assert.match(agent.output(), /pluginConfig\.message: invalid regex/);
  assert.match(agent.output(), /logPath: required by the filelog plugin/);

  swapLink('/dev/zero');
  await rejected(3, 'symlink to /dev/zero');
  const fifo = join(s.dir, 'fifo.yaml');
  execFileSync('mkfifo', [fifo]);
  swapLink(fifo);
  await rejected(4, 'symlink to a FIFO');
  assert.match(agent.output(), /not a regular file \(character device\)/);
  assert.match(agent.output(), /not a regular file \(FIFO\)/);

  const bomb = join(s.dir, 'bomb.yaml');
  const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) {
    const [prev, name] = [String.fromCharCode(96 + i), String.fromCharCode(97 + i)];
    levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  }
  writeFileSync(bomb, `${filelogConfig()}x-bomb:\n${levels.map((l) => `  ${l}`).join('\n')}\n`);
  swapLink(bomb);
  await rejected(5, 'YAML alias bomb');
  assert.match(agent.output(), /filelog\.yaml: YAML aliases expand too far/);

  writeFileSync(real, filelogConfig());
  swapLink(real);
  await waitFor(async () => (await metric('npd_config_last_reload_successful')) === 1, 30_000, agent.output);
  assert.equal(await successes(), 1, 'reverting applies');
  await stillReads();
  assert.doesNotMatch(agent.output(), /uncaught exception|unhandled rejection/);
  assert.equal(agent.child.exitCode, null, 'never restarted');
});
