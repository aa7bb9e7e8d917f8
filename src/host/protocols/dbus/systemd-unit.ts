import { DbusConnection, DbusError } from './client.ts';

const SYSTEMD = 'org.freedesktop.systemd1';
const UNIT = 'org.freedesktop.systemd1.Unit';
const SERVICE = 'org.freedesktop.systemd1.Service';

export interface UnitState {
  readonly loadState: string;
  readonly activeState: string;
  readonly subState: string;
  /** Automatic restarts since the last manual start (systemd ≥ 235; services only). */
  readonly nRestarts: number | undefined;
  /** When the unit last left the inactive state, in epoch microseconds; 0 if never. */
  readonly activatedUs: bigint;
}

/** sd_bus_path_encode: every byte outside [A-Za-z0-9] becomes _xx, so "kubelet.service" → "kubelet_2eservice". */
export function unitObjectPath(unit: string): string {
  let out = '';
  for (const byte of Buffer.from(unit, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9]/.test(c) ? c : `_${byte.toString(16).padStart(2, '0')}`;
  }
  return `/org/freedesktop/systemd1/unit/${out || '_'}`;
}

/** "kubelet.service" → "Kubelet", "systemd-timesyncd.service" → "SystemdTimesyncd", for condition names. */
export function unitTitle(unit: string): string {
  const base = unit.replace(/\.[a-z]+$/, '');
  return base
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p !== '')
    .map((p) => p[0]?.toUpperCase() + p.slice(1))
    .join('');
}

/** Reads a unit's state from systemd over D-Bus; systemd loads the unit object on demand. */
export async function readUnit(
  socketPath: string,
  uid: number,
  unit: string,
  signal: AbortSignal,
): Promise<UnitState> {
  const conn = await DbusConnection.open(socketPath, uid, signal);
  try {
    const path = unitObjectPath(unit);
    const get = (iface: string, name: string) => conn.getProperty(SYSTEMD, path, iface, name);
    const [loadState, activeState, subState, activated, restarts] = await Promise.all([
      get(UNIT, 'LoadState'),
      get(UNIT, 'ActiveState'),
      get(UNIT, 'SubState'),
      get(UNIT, 'InactiveExitTimestamp'),
      get(SERVICE, 'NRestarts').catch((err: unknown) => {
        // Not a service, or a systemd older than 235.
        if (err instanceof DbusError) return undefined;
        throw err;
      }),
    ]);
    return {
      loadState: String(loadState),
      activeState: String(activeState),
      subState: String(subState),
      nRestarts: restarts === undefined ? undefined : Number(restarts),
      activatedUs: typeof activated === 'bigint' ? activated : BigInt(Number(activated) || 0),
    };
  } finally {
    conn.close();
  }
}
