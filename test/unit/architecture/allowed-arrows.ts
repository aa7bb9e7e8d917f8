import type { AllowedArrows } from './import-graph.ts';

/**
 * Which unit of src/ may import which. Imports point downstream, into a port or a leaf: core/ and
 * gocompat/ import nothing in src; host/ and kube/ are protocol clients with no domain imports;
 * sources/ read logs, monitors/ turn them (and probes, plugins, stats) into statuses through rules/;
 * conditions/, taints/ and events/ act on the API through kube/; diagnostics/ serves NodeDiagnostic
 * requests through kube/, reading the host through host/ (and journal detection from sources/), and
 * its `seal` command parses flags with config/;
 * fleet/ reads the cluster's Nodes, events and repair controllers through kube/ for the `fleet` command;
 * replay/ runs the monitors (and the pure subsystem conditions of conditions/) over a recorded log; events/persist/ (webhook, file, OTLP) is
 * an adapter on the event pipeline that speaks its receivers' protocols through kube/http and host/protobuf; agent/ wires everything and the root files (main.ts, cli.ts) start it or a command (replay, seal).
 * The table itself must stay acyclic: the test checks that too.
 */
export const ALLOWED: AllowedArrows = {
  core: [],
  gocompat: [],
  config: ['core', 'gocompat'],
  host: ['core', 'gocompat'],
  kube: ['core', 'gocompat'],
  metrics: ['core'],
  rules: ['core', 'gocompat'],
  sources: ['core', 'gocompat', 'host', 'rules'],
  monitors: ['core', 'gocompat', 'config', 'host', 'metrics', 'rules', 'sources'],
  conditions: ['core', 'config', 'kube'],
  taints: ['core', 'kube'],
  diagnostics: ['core', 'config', 'host', 'kube', 'sources'],
  events: ['core', 'metrics', 'kube'],
  'events/persist': ['core', 'events', 'kube', 'host'],
  server: ['core'],
  fleet: ['core', 'gocompat', 'config', 'kube'],
  replay: ['core', 'gocompat', 'config', 'host', 'metrics', 'rules', 'sources', 'monitors', 'conditions'],
  agent: [
    'core',
    'gocompat',
    'config',
    'host',
    'kube',
    'metrics',
    'rules',
    'sources',
    'monitors',
    'conditions',
    'taints',
    'diagnostics',
    'events',
    'events/persist',
    'server',
    'replay',
  ],
  '.': ['core', 'config', 'host', 'conditions', 'diagnostics', 'replay', 'fleet', 'agent'],
};
