/**
 * The protocol clients written here and the maintained libraries they stand in for (README, "Dependencies,
 * and where we left the named stack"). Each row is measured as the same kind of esbuild bundle: the
 * Node built-ins the job needs anyway (`builtins`) and the modules the agent loads anyway (`shared`) are
 * in the baseline, so a figure is what the client itself adds.
 */
import { join } from 'node:path';
import { REPO } from '../support/agent-process.ts';

export interface Subject {
  /** The row's name in the table. */
  readonly row: string;
  /** Loaded by the baseline and by both sides: the transport Node gives either way. */
  readonly builtins: readonly string[];
  /** Packages the agent loads anyway (resolved from the repo's node_modules). */
  readonly shared: readonly string[];
  /** Our modules, imported whole (every export kept). */
  readonly ours: readonly string[];
  /** Left out of our bundle as the shipped build leaves them out (test/tools/build.ts). */
  readonly oursExternal?: readonly string[];
  /** The library, pinned, installed into its own directory so its closure is measured alone. */
  readonly library: {
    readonly label: string;
    readonly install: readonly string[];
    readonly imports: readonly string[];
  };
}

const src = (...p: string[]) => join(REPO, 'src', ...p);

/** Versions measured for BENCHMARKS.md; bump them together with the recorded numbers. */
export const SUBJECTS: readonly Subject[] = [
  {
    row: 'D-Bus (systemd unit state)',
    builtins: ['node:net'],
    shared: [],
    ours: [src('host', 'dbus', 'systemd-unit.ts'), src('host', 'dbus', 'client.ts')],
    library: { label: 'dbus-next 0.10.2', install: ['dbus-next@0.10.2'], imports: ['dbus-next'] },
  },
  {
    row: 'CRI gRPC (containerd probe)',
    builtins: ['node:net', 'node:http2'],
    shared: [],
    ours: [src('host', 'grpc', 'unary.ts'), src('host', 'grpc', 'cri-proto.ts')],
    library: {
      label: '@grpc/grpc-js 1.14.7 + @grpc/proto-loader 0.8.1',
      install: ['@grpc/grpc-js@1.14.7', '@grpc/proto-loader@0.8.1'],
      imports: ['@grpc/grpc-js', '@grpc/proto-loader'],
    },
  },
  {
    row: 'protobuf wire format (CRI, OTLP)',
    builtins: [],
    shared: [],
    ours: [src('host', 'protobuf.ts')],
    library: {
      label: 'protobufjs 8.8.1 /minimal (the runtime of pbjs static code)',
      install: ['protobufjs@8.8.1'],
      imports: ['protobufjs/minimal.js'],
    },
  },
  {
    row: 'OTLP logs over HTTP (protobuf and JSON)',
    builtins: ['node:http', 'node:https'],
    shared: ['prom-client'],
    ours: [src('events', 'persist', 'otlp.ts'), src('events', 'persist', 'otlp-config.ts')],
    library: {
      label: '@opentelemetry/exporter-logs-otlp-proto 0.301.2 + -http 0.301.2 + sdk-logs 3.1.1',
      install: [
        '@opentelemetry/exporter-logs-otlp-proto@0.301.2',
        '@opentelemetry/exporter-logs-otlp-http@0.301.2',
        '@opentelemetry/sdk-logs@3.1.1',
      ],
      imports: [
        '@opentelemetry/exporter-logs-otlp-proto',
        '@opentelemetry/exporter-logs-otlp-http',
        '@opentelemetry/sdk-logs',
      ],
    },
  },
  {
    row: 'Kubernetes API',
    builtins: ['node:http', 'node:https'],
    shared: ['prom-client'],
    ours: [src('kube', 'client.ts'), src('kube', 'kubeconfig.ts')],
    // Imported only for a kubeconfig with an auth-provider (src/kube/auth.ts); external in dist/main.js.
    oursExternal: ['@kubernetes/client-node'],
    library: {
      label: '@kubernetes/client-node 2.0.1',
      install: ['@kubernetes/client-node@2.0.1'],
      imports: ['@kubernetes/client-node'],
    },
  },
];
