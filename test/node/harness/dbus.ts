/**
 * The system D-Bus a real node has (the node-probes component mounts its socket, type Socket, and the
 * systemd probes talk to it). This machine's PID 1 is not systemd, so nothing answers for
 * org.freedesktop.systemd1 on it: the systemd probes report that, which is what the suite checks.
 * Started only when no system bus is there; stopped with the cluster.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManagedProcess, sleep } from '../../e2e/harness/processes.ts';

export const SYSTEM_BUS = '/run/dbus/system_bus_socket';

export async function ensureSystemBus(workDir: string): Promise<ManagedProcess | undefined> {
  if (fs.existsSync(SYSTEM_BUS)) return undefined;
  fs.mkdirSync(path.dirname(SYSTEM_BUS), { recursive: true });
  const p = new ManagedProcess(
    'dbus-daemon',
    ['dbus-daemon', '--system', '--nofork', '--nopidfile', '--nosyslog'],
    path.join(workDir, 'dbus.log'),
  );
  const deadline = Date.now() + 10_000;
  while (!fs.existsSync(SYSTEM_BUS) && Date.now() < deadline && !p.exited) await sleep(50);
  if (!fs.existsSync(SYSTEM_BUS)) throw new Error(`dbus-daemon --system made no ${SYSTEM_BUS}`);
  return p;
}

export async function stopSystemBus(p: ManagedProcess | undefined): Promise<void> {
  if (!p) return;
  await p.stop();
  fs.rmSync(SYSTEM_BUS, { force: true });
}
