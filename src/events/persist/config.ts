import type { Registry } from 'prom-client';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { ExtraSinkFactory } from '../record/index.ts';
import { FileSink } from './file.ts';
import { type OtlpConfig, otlpTls, SERVICE, validateOtlpConfig } from './otlp-config.ts';
import { OtlpSink } from './otlp.ts';
import type { OtlpProtocol } from './otlp-wire.ts';
import { type PersistSink, persistWatcher } from './watcher.ts';
import { safeUrl } from './http.ts';
import { WebhookSink } from './webhook.ts';

/** The agent options the persistence sinks read (a subset of Options). */
export interface PersistConfig extends OtlpConfig {
  readonly nodeName: string;
  /** "" disables the webhook sink. */
  readonly eventWebhookUrl: string;
  readonly eventWebhookHeaders: Readonly<Record<string, string>>;
  readonly eventWebhookTimeoutMs: number;
  /** "" disables the file sink. */
  readonly eventFile: string;
  readonly eventFileMaxBytes: number;
}

export interface PersistDeps {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly random?: () => number;
}

export interface PersistSinks {
  /** For EventPipelineOptions.extraWatchers. */
  readonly watchers: readonly ExtraSinkFactory[];
  /** After the pipeline has shut down: releases sockets and tries the file backlog once more. */
  close(): Promise<void>;
}

/** An RFC 9110 token followed by the separator: `Name: value` (webhook) or `Name=value` (OTLP). */
const HEADER = {
  ':': /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:(.*)$/s,
  '=': /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=(.*)$/s,
} as const;
/** What Node accepts in a header value; anything else would fail every request at send time. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Framing headers the sink computes per request; a fixed value would corrupt every request. */
const RESERVED = new Set(['content-length', 'transfer-encoding', 'host', 'connection']);

/**
 * Reads repeated header flags (`--event-webhook-header "Name: value"`, `--event-otlp-header Name=value`).
 * The flag parser splits lists on commas, so a piece that does not start with `Name:` (`Name=`) is glued
 * back onto the previous header's value. Error messages name the header, never its value, which is often
 * a credential.
 */
export function parseHeaderFlags(
  items: readonly string[],
  errors: string[],
  flag = '--event-webhook-header',
  sep: keyof typeof HEADER = ':',
): Record<string, string> {
  const pattern = HEADER[sep];
  const joined: string[] = [];
  for (const item of items) {
    if (joined.length > 0 && !pattern.test(item)) joined[joined.length - 1] += `,${item}`;
    else joined.push(item);
  }
  const headers: Record<string, string> = {};
  for (const item of joined) {
    const m = pattern.exec(item);
    const name = m?.[1];
    const value = m?.[2]?.trim() ?? '';
    if (!name) errors.push(`${flag}: expected "Name${sep === ':' ? ': ' : '='}value"`);
    else if (RESERVED.has(name.toLowerCase())) errors.push(`${flag}: ${name} is set by the agent`);
    else if (!HEADER_VALUE.test(value)) errors.push(`${flag}: invalid characters in ${name}`);
    else headers[name] = value;
  }
  return headers;
}

/** Flag checks that need more than the flag parser's types. */
export function validatePersistConfig(c: PersistConfig, errors: string[]): void {
  if (c.eventWebhookUrl !== '') {
    const url = URL.canParse(c.eventWebhookUrl) ? new URL(c.eventWebhookUrl) : undefined;
    if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
      errors.push('--event-webhook-url must be an http:// or https:// URL');
    }
  }
  if (!(c.eventWebhookTimeoutMs > 0)) errors.push('--event-webhook-timeout must be positive');
  if (!(c.eventFileMaxBytes > 0)) errors.push('--event-file-max-bytes must be positive');
  validateOtlpConfig(c, errors);
}

/** Builds the sinks the flags ask for; none when no --event-webhook-url, --event-file or --event-otlp-endpoint. */
export function createPersistSinks(c: PersistConfig, deps: PersistDeps): PersistSinks {
  const { clock, registry, logger } = deps;
  const sinks = [webhookSink(c, deps), fileSink(c, deps), otlpSink(c, deps)].filter(
    (s): s is PersistSink => s !== undefined,
  );
  return {
    watchers: sinks.map((sink) => persistWatcher(sink, { clock, registry, logger })),
    close: async () => {
      await Promise.all(sinks.map((s) => s.close()));
    },
  };
}

function webhookSink(c: PersistConfig, deps: PersistDeps): PersistSink | undefined {
  if (c.eventWebhookUrl === '') return undefined;
  const { clock, registry, logger, random } = deps;
  const url = new URL(c.eventWebhookUrl);
  const sink = new WebhookSink({
    url: c.eventWebhookUrl,
    headers: c.eventWebhookHeaders,
    timeoutMs: c.eventWebhookTimeoutMs,
    nodeName: c.nodeName,
    clock,
    registry,
    logger,
    random,
  });
  const headers = Object.keys(c.eventWebhookHeaders);
  logger.info({ url: safeUrl(url), headers }, 'persisting events to a webhook');
  // A Collector answers 200 to the webhook body and stores nothing (docs/event-sinks.md, "the trap").
  if (url.pathname.endsWith('/v1/logs')) {
    logger.warn(
      { url: safeUrl(url) },
      '--event-webhook-url looks like an OTLP logs endpoint: an OpenTelemetry Collector accepts the webhook body and stores nothing; use --event-otlp-endpoint',
    );
  }
  return sink;
}

function fileSink(c: PersistConfig, deps: PersistDeps): PersistSink | undefined {
  if (c.eventFile === '') return undefined;
  const { registry, logger } = deps;
  logger.info({ file: c.eventFile, maxBytes: c.eventFileMaxBytes }, 'persisting events to a file');
  return new FileSink({
    path: c.eventFile,
    maxBytes: c.eventFileMaxBytes,
    nodeName: c.nodeName,
    registry,
    logger,
  });
}

function otlpSink(c: PersistConfig, deps: PersistDeps): PersistSink | undefined {
  if (c.eventOtlpEndpoint === '') return undefined;
  const { clock, registry, logger, random } = deps;
  const sink = new OtlpSink({
    endpoint: c.eventOtlpEndpoint,
    protocol: c.eventOtlpProtocol as OtlpProtocol,
    headers: c.eventOtlpHeaders,
    timeoutMs: c.eventOtlpTimeoutMs,
    tls: otlpTls(c),
    source: {
      nodeName: c.nodeName,
      serviceName: SERVICE.name,
      serviceVersion: SERVICE.version,
      extraResource: c.eventOtlpResource,
    },
    clock,
    registry,
    logger,
    random,
  });
  const url = safeUrl(new URL(c.eventOtlpEndpoint));
  logger.info(
    { url, protocol: c.eventOtlpProtocol, headers: Object.keys(c.eventOtlpHeaders) },
    'persisting events to OTLP',
  );
  return sink;
}
