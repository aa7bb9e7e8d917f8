import type { FlagSpec } from '../config/flag-parser.ts';
import { type PersistConfig, parseHeaderFlags } from '../events/persist/config.ts';
import { parseResourceAttributes, readOtlpCa } from '../events/persist/otlp-config.ts';
import { B, D, type FlagReader, I, L, S } from './flag-specs.ts';

/** The flags of the sinks that persist events besides the API server (docs/event-sinks.md). */
export type EventSinkOptions = Omit<PersistConfig, 'nodeName'>;

export const EVENT_SINK_FLAGS: readonly FlagSpec[] = [
  S('event-webhook-url', 'Also POST every event, as core/v1 JSON, to this http(s) URL (docs/event-sinks.md)'),
  L('event-webhook-header', 'Header sent to --event-webhook-url, "Name: value"; repeatable'),
  D('event-webhook-timeout', 'Timeout of each --event-webhook-url request', '10s'),
  S('event-file', 'Also append every event, one JSON object per line, to this file'),
  I('event-file-max-bytes', 'Rotate --event-file to <file>.1 (keeping one) at this size', 10 * 1024 * 1024),
  S(
    'event-otlp-endpoint',
    'Also send every event as an OTLP log record to this OTLP/HTTP base URL (+ /v1/logs)',
  ),
  S('event-otlp-protocol', 'OTLP encoding: http/protobuf or http/json', 'http/protobuf'),
  L('event-otlp-header', 'Header sent to --event-otlp-endpoint, "Name=value"; repeatable'),
  D('event-otlp-timeout', 'Timeout of each --event-otlp-endpoint request', '10s'),
  S('event-otlp-ca-file', "PEM CA bundle that verifies an https:// --event-otlp-endpoint (default: Node's)"),
  B('event-otlp-insecure-skip-tls-verify', 'Do not verify the --event-otlp-endpoint certificate', false),
];

export function eventSinkOptions(f: FlagReader, env: NodeJS.ProcessEnv): EventSinkOptions {
  const otlp = f.get('event-otlp-endpoint');
  return {
    eventWebhookUrl: f.get('event-webhook-url'),
    eventWebhookHeaders: parseHeaderFlags(f.list('event-webhook-header'), f.errors),
    eventWebhookTimeoutMs: f.dur('event-webhook-timeout'),
    eventFile: f.get('event-file'),
    eventFileMaxBytes: f.num('event-file-max-bytes'),
    eventOtlpEndpoint: otlp,
    eventOtlpProtocol: f.get('event-otlp-protocol'),
    eventOtlpHeaders: parseHeaderFlags(f.list('event-otlp-header'), f.errors, '--event-otlp-header', '='),
    eventOtlpTimeoutMs: f.dur('event-otlp-timeout'),
    eventOtlpCaFile: f.get('event-otlp-ca-file'),
    eventOtlpCa: otlp === '' ? '' : readOtlpCa(f.get('event-otlp-ca-file'), f.errors),
    eventOtlpInsecureSkipTlsVerify: f.get('event-otlp-insecure-skip-tls-verify') === 'true',
    eventOtlpResource: otlp === '' ? [] : parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES, f.errors),
  };
}
