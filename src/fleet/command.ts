import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseFlags } from '../config/flag-parser.ts';
import type { Clock } from '../core/clock.ts';
import { createRegistry } from '../core/metrics.ts';
import { VERSION } from '../core/version.ts';
import { KubeClient } from '../kube/client.ts';
import { resolveConnection } from '../kube/config.ts';
import { ApiError } from '../kube/errors.ts';
import { readFleet } from './read.ts';
import { renderFleet, renderJson, renderTimeline } from './render.ts';
import { reports } from './view.ts';

const USAGE = `usage: node-problem-detector fleet [NODE] [-o wide|json] [--kubeconfig FILE]
       kubectl npd [NODE] [-o wide|json] [--kubeconfig FILE]

Lists the nodes with problems (one polarity: NPD's types when True, the *Ready types when False, the
kubelet's Ready when not True; Unknown shown as such), each with its reason, age and when each repair
controller configured for it would act (NodeHealthCheck, MachineHealthCheck, Karpenter), and the
agent's last event. With NODE: that node's conditions and events in time order.
`;

export interface FleetIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly clock: Clock;
}

interface Request {
  readonly node: string | undefined;
  readonly output: 'table' | 'wide' | 'json';
  readonly kubeconfig: string | undefined;
}

/** `fleet` (also `kubectl npd`): the fleet's problems from the API server; exit 0, 1 on API errors, 2 on usage. */
export async function runFleet(argv: readonly string[], io: FleetIo): Promise<number> {
  const parsed = parseRequest(argv);
  if ('help' in parsed) {
    io.stdout(USAGE);
    return 0;
  }
  if ('errors' in parsed) {
    io.stderr(`${parsed.errors.join('\n')}\n${USAGE}`);
    return 2;
  }
  try {
    const connection = await resolveConnection({
      kubeconfig: defaultKubeconfig(parsed, io.env),
      env: io.env,
    });
    if (!connection) {
      io.stderr('fleet: no kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config)\n');
      return 2;
    }
    const client = new KubeClient({
      connection,
      version: VERSION,
      registry: createRegistry(),
      clock: io.clock,
    });
    const state = await readFleet(client, parsed.node);
    for (const note of state.notes) io.stderr(`fleet: ${note}\n`);
    io.stdout(render(parsed, reports(state), io.clock.now()));
    return 0;
  } catch (err) {
    io.stderr(`fleet: ${describe(err, parsed.node)}\n`);
    return 1;
  }
}

function render(req: Request, all: ReturnType<typeof reports>, now: number): string {
  if (req.output === 'json') return renderJson(all, now);
  if (req.node !== undefined && all[0]) return renderTimeline(all[0], now);
  return renderFleet(all, now, req.output === 'wide');
}

function parseRequest(argv: readonly string[]): Request | { errors: string[] } | { help: true } {
  const flags = parseFlags(argv, [
    { name: 'o', kind: 'string', help: 'output: wide or json' },
    { name: 'output', kind: 'string', help: 'output: wide or json' },
    { name: 'kubeconfig', kind: 'string', help: 'kubeconfig file' },
    { name: 'help', kind: 'bool', help: 'usage' },
    { name: 'h', kind: 'bool', help: 'usage' },
  ]);
  const get = (name: string) => flags.values.get(name) as string | undefined;
  if (get('help') === 'true' || get('h') === 'true') return { help: true };
  const errors = [...flags.errors];
  const output = get('o') ?? get('output') ?? 'table';
  if (!['table', 'wide', 'json'].includes(output)) errors.push(`-o: "${output}" is not wide or json`);
  if (flags.positional.length > 1) errors.push(`at most one NODE, got ${flags.positional.join(' ')}`);
  if (errors.length > 0) return { errors };
  return { node: flags.positional[0], output: output as Request['output'], kubeconfig: get('kubeconfig') };
}

/** kubectl's default when neither --kubeconfig nor KUBECONFIG is given: ~/.kube/config. */
function defaultKubeconfig(req: Request, env: NodeJS.ProcessEnv): string | undefined {
  if (req.kubeconfig !== undefined || env.KUBECONFIG) return req.kubeconfig;
  const file = join(env.HOME ?? homedir(), '.kube', 'config');
  return existsSync(file) ? file : undefined;
}

function describe(err: unknown, node: string | undefined): string {
  if (err instanceof ApiError && err.statusCode === 404 && node !== undefined)
    return `node "${node}" not found`;
  return err instanceof Error ? err.message : String(err);
}
