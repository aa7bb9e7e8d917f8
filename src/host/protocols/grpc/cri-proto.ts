/**
 * The few CRI runtime.v1 messages the containerd probe needs, in protobuf wire format. Field numbers
 * follow k8s.io/cri-api pkg/apis/runtime/v1/api.proto:
 *
 *   message VersionRequest   { string version = 1; }
 *   message VersionResponse  { string version = 1; string runtime_name = 2; string runtime_version = 3;
 *                              string runtime_api_version = 4; }
 *   message StatusRequest    { bool verbose = 1; }
 *   message StatusResponse   { RuntimeStatus status = 1; map<string, string> info = 2; ... }
 *   message RuntimeStatus    { repeated RuntimeCondition conditions = 1; }
 *   message RuntimeCondition { string type = 1; bool status = 2; string reason = 3; string message = 4; }
 *
 * Unknown fields are skipped, so newer runtimes with more fields decode fine.
 */
import {
  boolField,
  bytesField,
  decodeFields,
  messageField,
  messagesOf,
  stringOf,
  intOf,
} from '../protobuf.ts';

export const RUNTIME_SERVICE = '/runtime.v1.RuntimeService';

export interface VersionResponse {
  readonly version: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

export interface RuntimeCondition {
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

export function decodeVersionResponse(buf: Buffer): VersionResponse {
  const f = decodeFields(buf);
  return {
    version: stringOf(f, 1),
    runtimeName: stringOf(f, 2),
    runtimeVersion: stringOf(f, 3),
    runtimeApiVersion: stringOf(f, 4),
  };
}

export function decodeStatusResponse(buf: Buffer): RuntimeCondition[] {
  const status = messagesOf(decodeFields(buf), 1).at(-1);
  if (!status) return [];
  return messagesOf(decodeFields(status), 1).map((c) => {
    const f = decodeFields(c);
    return {
      type: stringOf(f, 1),
      status: intOf(f, 2) !== 0n,
      reason: stringOf(f, 3),
      message: stringOf(f, 4),
    };
  });
}

export function encodeVersionRequest(version = 'v1'): Buffer {
  return bytesField(1, version);
}

export function encodeStatusRequest(verbose = false): Buffer {
  return boolField(1, verbose);
}

/** Used by fakes in tests, and documents the layout the decoders expect. */
export function encodeVersionResponse(v: VersionResponse): Buffer {
  return Buffer.concat([
    bytesField(1, v.version),
    bytesField(2, v.runtimeName),
    bytesField(3, v.runtimeVersion),
    bytesField(4, v.runtimeApiVersion),
  ]);
}

export function encodeStatusResponse(conditions: readonly RuntimeCondition[]): Buffer {
  const encoded = conditions.map((c) =>
    messageField(
      1,
      Buffer.concat([
        bytesField(1, c.type),
        boolField(2, c.status),
        bytesField(3, c.reason),
        bytesField(4, c.message),
      ]),
    ),
  );
  return messageField(1, Buffer.concat(encoded));
}
