import { StartError } from '../core/errors.ts';
import { ListenError } from '../server/http.ts';

const FLAGS = {
  status: { address: '--address', port: '--port' },
  metrics: { address: '--prometheus-address', port: '--prometheus-port' },
} as const;

const WHY: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'the address is not on this host',
};

/**
 * A bind failure as the one line an operator acts on: which listener, what it tried and the flag to
 * change. Anything else is a bug and keeps its stack.
 */
export function startErrorOf(err: unknown): unknown {
  if (!(err instanceof ListenError)) return err;
  const flags = FLAGS[err.listener];
  const why = (err.code && WHY[err.code]) ?? err.message;
  const change = err.code === 'EADDRNOTAVAIL' ? flags.address : flags.port;
  const where = `${err.address || '0.0.0.0'}:${err.port}`;
  const hint = err.code === 'EADDRINUSE' ? ` (or stop the process that holds ${where})` : '';
  return new StartError(`cannot listen on ${where}: ${why}; change ${change}${hint}`);
}
