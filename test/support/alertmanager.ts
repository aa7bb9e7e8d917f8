/**
 * The real Alertmanager (test/tools/alertmanager/build.sh builds it from its Go module, cached), run on
 * 127.0.0.1 with a given config, and a webhook receiver on 127.0.0.1 that keeps what it is sent.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort, waitFor } from './agent-process.ts';

const BUILD = join(import.meta.dirname, '..', 'tools', 'alertmanager', 'build.sh');

/** Builds (or finds) Alertmanager; rejects with the build's last lines when it fails. */
export function buildAlertmanager(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [BUILD], { timeout: 30 * 60_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const bin = /^ALERTMANAGER=(.+)$/m.exec(stdout)?.[1];
      if (err || !bin) reject(new Error(`${BUILD} failed: ${stderr.split('\n').slice(-10).join('\n')}`));
      else resolve(bin);
    });
  });
}

export interface Notification {
  readonly alerts: { readonly labels: Record<string, string> }[];
}

export interface Webhook {
  readonly url: string;
  readonly received: Notification[];
  close(): Promise<void>;
}

export async function startWebhook(): Promise<Webhook> {
  const received: Notification[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      received.push(JSON.parse(body) as Notification);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface RunningAlertmanager {
  readonly url: string;
  /** POSTs alerts to /api/v2/alerts (firing, no end time). */
  send(alerts: readonly Record<string, string>[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startAlertmanager(bin: string, config: object): Promise<RunningAlertmanager> {
  const dir = mkdtempSync(join(tmpdir(), 'npd-alertmanager-'));
  writeFileSync(join(dir, 'alertmanager.yml'), stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let log = '';
  const child: ChildProcess = spawn(
    bin,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await waitFor(
    async () => (await fetch(`${url}/-/ready`)).ok,
    30_000,
    () => log,
  );
  return {
    url,
    async send(alerts) {
      const body = JSON.stringify(alerts.map((labels) => ({ labels, annotations: {} })));
      const res = await fetch(`${url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      if (!res.ok) throw new Error(`POST /api/v2/alerts: ${res.status} ${await res.text()}\n${log}`);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
