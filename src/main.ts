#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { run } from './cli.ts';

// V8 would pretenure kmsg lines (they survive a scavenge mid-drain), filling old space under a flood:
// off, a 40k lines/s flood costs ~25 % less CPU and ~6 MiB less RSS. NODE_OPTIONS cannot carry it.
setFlagsFromString('--no-allocation-site-pretenuring');

/**
 * The only place that exits. Signals are handled explicitly: as PID 1 in a container Node ignores
 * SIGTERM otherwise, and exiting through process.exit lets pino flush.
 */
async function main(): Promise<void> {
  // A SIGUSR1 listener keeps Node from opening its inspector on 127.0.0.1:9229: in the privileged agent
  // under hostNetwork that is a root debugger on the node's loopback. The image also passes
  // --disable-sigusr1; this covers `node dist/main.js` started any other way.
  let onUsr1: () => void = () => {
    process.stderr.write('SIGUSR1 ignored: the inspector is disabled\n');
  };
  process.on('SIGUSR1', () => onUsr1());
  const outcome = await run({
    argv: process.argv.slice(2),
    env: process.env,
    rulesDir: process.env.NPD_RULES_DIR ?? join(import.meta.dirname, '..', 'rules'),
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    readStdin: () => readFileSync(0, 'utf8'),
  });
  if ('exit' in outcome) {
    process.exitCode = outcome.exit;
    return;
  }
  const { agent, logger, graceMs } = outcome;
  onUsr1 = () => logger.warn({ signal: 'SIGUSR1' }, 'SIGUSR1 ignored: the inspector is disabled');
  // Timers are unref'd so tests can drop agents; the process itself lives until a signal.
  const keepAlive = setInterval(() => {}, 2 ** 30);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal, graceMs }, 'shutting down');
    const deadline = setTimeout(() => process.exit(1), graceMs + 2000);
    void agent.stop(graceMs).finally(() => {
      clearTimeout(deadline);
      clearInterval(keepAlive);
      logger.info('stopped');
      process.exit(0);
    });
  };
  // SIGHUP (a closed terminal, or `kill -HUP` meant as "restart") stops as gracefully as SIGTERM:
  // Node's default would end the process at once (exit 129), dropping queued events unflushed.
  // Config changes need no signal: hot reload watches the files.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  // A bug in one callback must degrade the agent, not take every monitor down with it.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception'));
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
