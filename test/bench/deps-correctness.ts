/**
 * Our protobuf encoders and decoders against protobufjs (the runtime @grpc/proto-loader uses): the same
 * message gives the same bytes, and what one side writes the other reads back. The schemas below copy
 * the field numbers our modules cite (k8s.io/cri-api api.proto, opentelemetry-proto logs), so this checks
 * the wire mechanics (varints, lengths, fixed64, oneof, maps), not the numbers themselves.
 */
import { deepStrictEqual } from 'node:assert';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { encodeProto, encodeJson } from '../../src/events/persist/otlp-wire.ts';
import {
  decodeStatusResponse,
  decodeVersionResponse,
  encodeStatusRequest,
  encodeStatusResponse,
  encodeVersionRequest,
  encodeVersionResponse,
} from '../../src/host/protocols/grpc/cri-proto.ts';

export const CRI_PROTO = `syntax = "proto3"; package runtime.v1;
message VersionRequest { string version = 1; }
message VersionResponse { string version = 1; string runtime_name = 2; string runtime_version = 3; string runtime_api_version = 4; }
message StatusRequest { bool verbose = 1; }
message RuntimeCondition { string type = 1; bool status = 2; string reason = 3; string message = 4; }
message RuntimeStatus { repeated RuntimeCondition conditions = 1; }
message StatusResponse { RuntimeStatus status = 1; map<string, string> info = 2; }`;

export const OTLP_PROTO = `syntax = "proto3"; package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; bytes bytes_value = 7; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message LogRecord { fixed64 time_unix_nano = 1; fixed64 observed_time_unix_nano = 11; int32 severity_number = 2;
  string severity_text = 3; AnyValue body = 5; repeated KeyValue attributes = 6; }
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }`;

interface PbType {
  encode(m: unknown): { finish(): Uint8Array };
  decode(b: Uint8Array): unknown;
  fromObject(o: unknown): unknown;
  toObject(m: unknown, o: unknown): unknown;
}
export type Lookup = (name: string) => PbType;
interface Protobufjs {
  parse(text: string): { root: { lookupType(n: string): PbType } };
}

/** protobufjs as installed beside `packageDir` (@grpc/proto-loader's dependency). */
export function protobufjsBeside(packageDir: string): Protobufjs {
  return createRequire(join(packageDir, 'package.json'))('protobufjs') as Protobufjs;
}

/** The message types of a schema text, by name within its package. */
export function lookup(pb: Protobufjs, schema: string): Lookup {
  const root = pb.parse(schema).root;
  const pkg = /package ([\w.]+);/.exec(schema)?.[1];
  return (n) => root.lookupType(`${pkg}.${n}`);
}

const bytes = (t: PbType, o: unknown) => Buffer.from(t.encode(t.fromObject(o)).finish());

/**
 * protobufjs writes a proto3 field that is set even when it holds the default ('' or false); Go's encoder
 * (containerd's) and ours leave such fields out. Byte comparisons give protobufjs only the non-defaults.
 */
const sparse = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== '' && v !== false));

const CONDITIONS = [
  { type: 'RuntimeReady', status: true, reason: '', message: '' },
  {
    type: 'NetworkReady',
    status: false,
    reason: 'NetworkPluginNotReady',
    message: 'cni config uninitialized',
  },
];
const VERSION = {
  version: '0.1.0',
  runtimeName: 'containerd',
  runtimeVersion: 'v2.1.4',
  runtimeApiVersion: 'v1',
};

export function criChecks(t: Lookup): string[] {
  const ok: string[] = [];
  deepStrictEqual(encodeVersionRequest('v1'), bytes(t('VersionRequest'), { version: 'v1' }));
  deepStrictEqual(encodeStatusRequest(true), bytes(t('StatusRequest'), { verbose: true }));
  deepStrictEqual(encodeStatusRequest(false), bytes(t('StatusRequest'), {}));
  ok.push('VersionRequest and StatusRequest: byte-identical to protobufjs');
  deepStrictEqual(decodeVersionResponse(bytes(t('VersionResponse'), VERSION)), VERSION);
  const status = { status: { conditions: CONDITIONS }, info: { config: '{"a":1}' } };
  deepStrictEqual(decodeStatusResponse(bytes(t('StatusResponse'), status)), CONDITIONS);
  ok.push(
    'VersionResponse and StatusResponse (info map, explicit defaults) written by protobufjs: read back equal',
  );
  deepStrictEqual(encodeVersionResponse(VERSION), bytes(t('VersionResponse'), VERSION));
  const written = { status: { conditions: CONDITIONS.map(sparse) } };
  deepStrictEqual(encodeStatusResponse(CONDITIONS), bytes(t('StatusResponse'), written));
  ok.push("the test servers' VersionResponse and StatusResponse: byte-identical to protobufjs");
  return ok;
}

const LOG = {
  resource: [
    ['k8s.node.name', 'node-1'],
    ['service.name', 'node-problem-detector'],
    ['n', 0],
  ] as const,
  scope: { name: 'node-problem-detector', version: '1.2.3' },
  timeUnixNano: 1_764_800_000_123_456_789n,
  observedTimeUnixNano: 1_764_800_001_000_000_000n,
  severityNumber: 13,
  severityText: 'WARN',
  body: 'task kworker blocked for more than 120 seconds',
  attributes: [
    ['k8s.event.reason', 'TaskHung'],
    ['k8s.event.count', 3],
    ['empty', ''],
  ] as const,
};

export function otlpChecks(t: Lookup): string[] {
  const type = t('ExportLogsServiceRequest');
  const proto = encodeProto(LOG);
  const decoded = type.toObject(type.decode(proto), { longs: String, enums: Number });
  deepStrictEqual(decoded, JSON.parse(encodeJson(LOG).toString()));
  const again = Buffer.from(type.encode(type.decode(proto)).finish());
  deepStrictEqual(again, proto);
  return [
    'OTLP ExportLogsServiceRequest (http/protobuf) decoded by protobufjs equals our http/json body',
    'and protobufjs re-encodes it to the same bytes (field order, empty oneof members, fixed64)',
  ];
}

/** Throws on the first difference; returns what was checked. */
export function correctness(packageDir: string): string[] {
  const pb = protobufjsBeside(packageDir);
  return [...criChecks(lookup(pb, CRI_PROTO)), ...otlpChecks(lookup(pb, OTLP_PROTO))];
}
