import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DbusConnection, DbusError } from '../../../../src/host/protocols/dbus/client.ts';
import { tempDir } from '../../monitors/probe/helpers.ts';

const hasDaemon = spawnSync('dbus-daemon', ['--version']).status === 0;

/** A private dbus-daemon (the reference implementation) on a socket in a temp dir. */
async function startDaemon(dir: string): Promise<{ socket: string; child: ChildProcess }> {
  const socket = join(dir, 'bus');
  const config = join(dir, 'bus.conf');
  await writeFile(
    config,
    `<busconfig><type>custom</type><listen>unix:path=${socket}</listen><auth>EXTERNAL</auth>
     <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/><allow user="*"/></policy></busconfig>`,
  );
  const child = spawn('dbus-daemon', ['--config-file', config, '--nofork', '--print-address'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.once('data', () => resolve());
  });
  return { socket, child };
}

describe('D-Bus client against the real dbus-daemon', {
  skip: hasDaemon ? false : 'dbus-daemon is not installed',
}, () => {
  it('authenticates, gets a unique name from Hello and reads a property of the bus itself', async () => {
    const { socket, child } = await startDaemon(await tempDir());
    after(() => child.kill());
    // A dropped reply must fail the test, not hang it.
    const conn = await DbusConnection.open(socket, process.getuid?.() ?? 0, AbortSignal.timeout(5000));
    try {
      const id = await conn.call({
        destination: 'org.freedesktop.DBus',
        path: '/org/freedesktop/DBus',
        interface: 'org.freedesktop.DBus',
        member: 'GetId',
      });
      assert.match(String(id.body[0]), /^[0-9a-f]{32}$/);
      const interfaces = await conn.getProperty(
        'org.freedesktop.DBus',
        '/org/freedesktop/DBus',
        'org.freedesktop.DBus',
        'Interfaces',
      );
      assert.ok(Array.isArray(interfaces));
      await assert.rejects(
        conn.getProperty(
          'org.freedesktop.systemd1',
          '/org/freedesktop/systemd1/unit/kubelet_2eservice',
          'org.freedesktop.systemd1.Unit',
          'ActiveState',
        ),
        (err: unknown) =>
          err instanceof DbusError && err.dbusName === 'org.freedesktop.DBus.Error.ServiceUnknown',
      );
    } finally {
      conn.close();
    }
  });
});
