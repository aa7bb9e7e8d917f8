/**
 * OTLP/HTTP logs on the wire, JSON and protobuf, for one record per request. Field numbers follow
 * opentelemetry-proto (collector/logs/v1/logs_service.proto, logs/v1/logs.proto, common/v1/common.proto):
 *
 *   ExportLogsServiceRequest  { repeated ResourceLogs resource_logs = 1; }
 *   ResourceLogs              { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }
 *   Resource                  { repeated KeyValue attributes = 1; }
 *   ScopeLogs                 { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; }
 *   InstrumentationScope      { string name = 1; string version = 2; }
 *   LogRecord                 { fixed64 time_unix_nano = 1; SeverityNumber severity_number = 2;
 *                               string severity_text = 3; AnyValue body = 5;
 *                               repeated KeyValue attributes = 6; fixed64 observed_time_unix_nano = 11; }
 *   KeyValue                  { string key = 1; AnyValue value = 2; }
 *   AnyValue                  { oneof { string string_value = 1; int64 int_value = 3; ... } }
 *   ExportLogsServiceResponse { ExportLogsPartialSuccess partial_success = 1; }
 *   ExportLogsPartialSuccess  { int64 rejected_log_records = 1; string error_message = 2; }
 *
 * The JSON form is the protobuf JSON mapping OTLP specifies: lowerCamelCase names, 64-bit integers as
 * decimal strings, enums as numbers.
 */
import {
  bytesField,
  decodeFields,
  fixed64Field,
  messageField,
  messagesOf,
  stringOf,
  varintField,
  intOf,
} from '../../host/protocols/protobuf.ts';
import type { AttrValue, Attributes, OtlpLog } from './otlp-log.ts';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export const CONTENT_TYPE: Readonly<Record<OtlpProtocol, string>> = {
  'http/protobuf': 'application/x-protobuf',
  'http/json': 'application/json',
};

function jsonValue(v: AttrValue): Record<string, string> {
  return typeof v === 'number' ? { intValue: String(v) } : { stringValue: v };
}

function jsonAttributes(attrs: Attributes): { key: string; value: Record<string, string> }[] {
  return attrs.map(([key, v]) => ({ key, value: jsonValue(v) }));
}

export function encodeJson(log: OtlpLog): Buffer {
  const record = {
    timeUnixNano: String(log.timeUnixNano),
    observedTimeUnixNano: String(log.observedTimeUnixNano),
    severityNumber: log.severityNumber,
    severityText: log.severityText,
    body: { stringValue: log.body },
    attributes: jsonAttributes(log.attributes),
  };
  const request = {
    resourceLogs: [
      {
        resource: { attributes: jsonAttributes(log.resource) },
        scopeLogs: [{ scope: log.scope, logRecords: [record] }],
      },
    ],
  };
  return Buffer.from(JSON.stringify(request));
}

/** AnyValue is a oneof: its member is written even when empty or 0. */
function protoValue(v: AttrValue): Buffer {
  return typeof v === 'number' ? varintField(3, v, true) : messageField(1, v);
}

function protoAttributes(field: number, attrs: Attributes): Buffer[] {
  return attrs.map(([key, v]) =>
    messageField(field, Buffer.concat([bytesField(1, key), messageField(2, protoValue(v))])),
  );
}

export function encodeProto(log: OtlpLog): Buffer {
  const record = Buffer.concat([
    fixed64Field(1, log.timeUnixNano),
    varintField(2, log.severityNumber),
    bytesField(3, log.severityText),
    messageField(5, protoValue(log.body)),
    ...protoAttributes(6, log.attributes),
    fixed64Field(11, log.observedTimeUnixNano),
  ]);
  const scope = Buffer.concat([bytesField(1, log.scope.name), bytesField(2, log.scope.version)]);
  const scopeLogs = Buffer.concat([messageField(1, scope), messageField(2, record)]);
  const resource = Buffer.concat(protoAttributes(1, log.resource));
  const resourceLogs = Buffer.concat([messageField(1, resource), messageField(2, scopeLogs)]);
  return messageField(1, resourceLogs);
}

export function encode(protocol: OtlpProtocol, log: OtlpLog): Buffer {
  return protocol === 'http/json' ? encodeJson(log) : encodeProto(log);
}

/** partialSuccess of an export response; rejected 0 and no message when the body says nothing. */
export interface PartialSuccess {
  readonly rejected: number;
  readonly message: string;
}

function jsonPartial(text: string): PartialSuccess {
  if (text.trim() === '') return { rejected: 0, message: '' };
  const body = JSON.parse(text) as {
    partialSuccess?: { rejectedLogRecords?: unknown; errorMessage?: unknown };
  };
  const partial = body?.partialSuccess ?? {};
  const rejected = Number(partial.rejectedLogRecords ?? 0);
  if (!Number.isFinite(rejected)) throw new Error('rejectedLogRecords is not a number');
  return { rejected, message: typeof partial.errorMessage === 'string' ? partial.errorMessage : '' };
}

function protoPartial(bytes: Buffer): PartialSuccess {
  const partial = messagesOf(decodeFields(bytes), 1).at(-1);
  if (!partial) return { rejected: 0, message: '' };
  const f = decodeFields(partial);
  return { rejected: Number(intOf(f, 1)), message: stringOf(f, 2) };
}

/**
 * The most of an export answer that is parsed. A real one is empty or a partialSuccess of a few bytes
 * with an error message; anything larger is not an export response, and parsing it is work a peer
 * chooses for us.
 */
export const MAX_EXPORT_ANSWER_BYTES = 64 * 1024;

/**
 * Reads partialSuccess from a 2xx export response (at most MAX_EXPORT_ANSWER_BYTES of it). The server answers in the request's encoding
 * (OTLP/HTTP spec); the Content-Type decides, so a JSON answer to a protobuf request still reads, and
 * without one a body starting with `{` is read as JSON.
 * Throws on a body that is neither (a proxy's page, say), which the sink counts as rejected.
 */
export function parsePartialSuccess(contentType: string | undefined, bytes: Buffer): PartialSuccess {
  const type = (contentType ?? '').toLowerCase();
  if (bytes.length === 0) return { rejected: 0, message: '' };
  if (bytes.length > MAX_EXPORT_ANSWER_BYTES)
    throw new Error(`answer of ${bytes.length} bytes is over ${MAX_EXPORT_ANSWER_BYTES} bytes; not parsed`);
  if (type.includes('json')) return jsonPartial(bytes.toString('utf8'));
  if (type.includes('protobuf')) return protoPartial(bytes);
  if (type !== '') throw new Error(`not an OTLP export response (Content-Type ${contentType})`);
  return bytes.toString('utf8').trimStart().startsWith('{')
    ? jsonPartial(bytes.toString('utf8'))
    : protoPartial(bytes);
}
