/**
 * A real OpenTelemetry Collector for the OTLP sink tests: built by test/tools/otelcol/build.sh (cached),
 * started with the OTLP/HTTP receiver on 127.0.0.1 and the file exporter writing every log request it
 * stores to a temp file, which the tests read back.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, waitFor } from './agent-process.ts';

export const OTELCOL_BUILD = join(REPO, 'test', 'tools', 'otelcol', 'build.sh');

/** Runs build.sh (a no-op once built) and returns the Collector binary it reports. */
export function ensureCollector(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [OTELCOL_BUILD], { timeout: 30 * 60_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const bin = /^OTELCOL=(.+)$/m.exec(stdout)?.[1];
      if (err || !bin) reject(new Error(`${OTELCOL_BUILD} failed: ${err?.message}\n${stderr.slice(-3000)}`));
      else resolve(bin);
    });
  });
}

/** One stored log record, flattened: attributes as plain values (intValue as number). */
export interface StoredRecord {
  readonly resource: Record<string, unknown>;
  readonly scope: { readonly name?: string; readonly version?: string };
  readonly attributes: Record<string, unknown>;
  readonly body: unknown;
  readonly severityNumber?: number;
  readonly severityText?: string;
  readonly timeUnixNano?: string;
  readonly observedTimeUnixNano?: string;
}

export interface Collector {
  /** Base URL of the OTLP/HTTP receiver, for --event-otlp-endpoint. */
  readonly endpoint: string;
  readonly port: number;
  /** Every record the file exporter has written so far. */
  records(): StoredRecord[];
  /** The Collector's own log. */
  output(): string;
  stop(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

function anyValue(v: Record<string, unknown> | undefined): unknown {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('boolValue' in v) return v.boolValue;
  if ('doubleValue' in v) return v.doubleValue;
  return v;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

/** Parses the file exporter's output: one OTLP/JSON ExportLogsServiceRequest per line. */
export function parseFileExport(text: string): StoredRecord[] {
  const out: StoredRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    for (const rl of JSON.parse(line).resourceLogs ?? []) {
      for (const sl of rl.scopeLogs ?? []) {
        for (const lr of sl.logRecords ?? []) {
          out.push({
            resource: attrs(rl.resource?.attributes),
            scope: sl.scope ?? {},
            attributes: attrs(lr.attributes),
            body: anyValue(lr.body),
            severityNumber: lr.severityNumber,
            severityText: lr.severityText,
            timeUnixNano: lr.timeUnixNano,
            observedTimeUnixNano: lr.observedTimeUnixNano,
          });
        }
      }
    }
  }
  return out;
}

function config(port: number, file: string, tls?: CollectorTls): string {
  const receiverTls = tls
    ? `        tls:\n          cert_file: ${tls.certFile}\n          key_file: ${tls.keyFile}\n`
    : '';
  // The Collector's own telemetry would listen on :8888; tests running together must not collide.
  return `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
${receiverTls}exporters:
  file:
    path: ${file}
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [file]
`;
}

export interface CollectorTls {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface CollectorOptions {
  /** Keeps config and output here, and leaves them after stop (a Collector restarted on it appends). */
  readonly dir?: string;
  /** Serve the OTLP receiver over https with this certificate. */
  readonly tls?: CollectorTls;
}

/** Starts the Collector on `port` (a fixed port lets a test stop it and bring it back on the same one). */
export async function startCollector(
  bin: string,
  port: number,
  opts: CollectorOptions = {},
): Promise<Collector> {
  const { dir, tls } = opts;
  const work = dir ?? mkdtempSync(join(tmpdir(), 'npd-otelcol-'));
  const file = join(work, 'logs.jsonl');
  const cfg = join(work, 'config.yaml');
  writeFileSync(cfg, config(port, file, tls));
  const child: ChildProcess = spawn(bin, [`--config=${cfg}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const readAll = () => {
    try {
      return parseFileExport(readFileSync(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  };
  await waitFor(
    () => log.includes('Everything is ready'),
    30_000,
    () => log,
  );
  return {
    endpoint: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    records: readAll,
    output: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      if (!dir) rmSync(work, { recursive: true, force: true });
    },
  };
}
