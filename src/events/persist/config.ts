import type { Registry } from 'prom-client';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { ExtraSinkFactory } from '../record/index.ts';
import { FileSink } from './file.ts';
import { type PersistSink, persistWatcher } from './watcher.ts';
import { safeUrl, WebhookSink } from './webhook.ts';

/** The agent options the persistence sinks read (a subset of Options). */
export interface PersistConfig {
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

/** An RFC 9110 token followed by a colon. */
const HEADER = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:(.*)$/s;
/** What Node accepts in a header value; anything else would fail every request at send time. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Framing headers the sink computes per request; a fixed value would corrupt every request. */
const RESERVED = new Set(['content-length', 'transfer-encoding', 'host', 'connection']);

/**
 * Reads repeated `--event-webhook-header "Name: value"` flags. The flag parser splits lists on commas,
 * so a piece that does not start with `Name:` is glued back onto the previous header's value. Error
 * messages name the header, never its value, which is often a credential.
 */
export function parseHeaderFlags(items: readonly string[], errors: string[]): Record<string, string> {
  const joined: string[] = [];
  for (const item of items) {
    if (joined.length > 0 && !HEADER.test(item)) joined[joined.length - 1] += `,${item}`;
    else joined.push(item);
  }
  const headers: Record<string, string> = {};
  for (const item of joined) {
    const m = HEADER.exec(item);
    const name = m?.[1];
    const value = m?.[2]?.trim() ?? '';
    if (!name) errors.push('--event-webhook-header: expected "Name: value"');
    else if (RESERVED.has(name.toLowerCase()))
      errors.push(`--event-webhook-header: ${name} is set by the agent`);
    else if (!HEADER_VALUE.test(value)) errors.push(`--event-webhook-header: invalid characters in ${name}`);
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
}

/** Builds the sinks the flags ask for; none when neither --event-webhook-url nor --event-file is set. */
export function createPersistSinks(c: PersistConfig, deps: PersistDeps): PersistSinks {
  const { clock, registry, logger } = deps;
  const sinks: PersistSink[] = [];
  if (c.eventWebhookUrl !== '') {
    const sink = new WebhookSink({
      url: c.eventWebhookUrl,
      headers: c.eventWebhookHeaders,
      timeoutMs: c.eventWebhookTimeoutMs,
      nodeName: c.nodeName,
      clock,
      registry,
      logger,
      random: deps.random,
    });
    sinks.push(sink);
    const headers = Object.keys(c.eventWebhookHeaders);
    logger.info({ url: safeUrl(new URL(c.eventWebhookUrl)), headers }, 'persisting events to a webhook');
  }
  if (c.eventFile !== '') {
    sinks.push(
      new FileSink({
        path: c.eventFile,
        maxBytes: c.eventFileMaxBytes,
        nodeName: c.nodeName,
        registry,
        logger,
      }),
    );
    logger.info({ file: c.eventFile, maxBytes: c.eventFileMaxBytes }, 'persisting events to a file');
  }
  return {
    watchers: sinks.map((sink) => persistWatcher(sink, { clock, registry, logger })),
    close: async () => {
      await Promise.all(sinks.map((s) => s.close()));
    },
  };
}
