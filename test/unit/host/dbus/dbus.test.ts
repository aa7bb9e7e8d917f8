import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DbusConnection, DbusError } from '../../../../src/host/protocols/dbus/client.ts';
import { splitSignature } from '../../../../src/host/protocols/dbus/codec.ts';
import { unitObjectPath, unitTitle } from '../../../../src/host/protocols/dbus/systemd-unit.ts';
import {
  decodeMessage,
  encodeMessage,
  MessageType,
  messageLength,
} from '../../../../src/host/protocols/dbus/wire.ts';
import { FakeDbus } from '../../../support/fake-dbus.ts';
import { tempDir } from '../../monitors/probe/helpers.ts';

describe('D-Bus wire format', () => {
  it('encodes a method call byte for byte as the specification lays it out', () => {
    const bytes = encodeMessage({
      type: MessageType.MethodCall,
      flags: 0,
      serial: 1,
      path: '/a',
      member: 'M',
      body: [],
    });
    const expected = [
      '6c010001',
      '00000000',
      '01000000',
      '1a000000', // header, body length 0, serial 1, fields array 26 bytes
      '01016f00',
      '02000000',
      '2f610000',
      '00000000', // (PATH, o "/a"), padded to 8
      '03017300',
      '01000000',
      '4d00',
      '000000000000', // (MEMBER, s "M"), header padded to 48
    ].join('');
    assert.equal(bytes.toString('hex'), expected);
    assert.equal(messageLength(bytes), 48);
  });

  it('decodes a big-endian method return', () => {
    const hex =
      '42020001' +
      '00000007' +
      '00000005' +
      '0000000f' +
      '05017500' +
      '00000001' +
      '08016700' +
      '01730000' +
      '00000002' +
      '686900';
    const m = decodeMessage(Buffer.from(hex, 'hex'));
    assert.equal(m.type, MessageType.MethodReturn);
    assert.equal(m.serial, 5);
    assert.equal(m.replySerial, 1);
    assert.deepEqual(m.body, ['hi']);
  });

  it('round-trips nested signatures with correct alignment', () => {
    const signature = 'ya{sv}(ybnqiuxtd)asg';
    const body = [
      7,
      [
        ['a', { signature: 's', value: 'x' }],
        ['b', { signature: 'at', value: [1n, 2n] }],
      ],
      [1, true, -2, 3, -4, 5, -6n, 7n, 0.5],
      ['one', 'two'],
      'a{sv}',
    ];
    const bytes = encodeMessage({
      type: MessageType.MethodReturn,
      flags: 0,
      serial: 9,
      replySerial: 3,
      signature,
      body,
    });
    assert.deepEqual(decodeMessage(bytes).body, body);
    assert.deepEqual(splitSignature(signature), ['y', 'a{sv}', '(ybnqiuxtd)', 'as', 'g']);
  });

  it('rejects malformed signatures and truncated messages', () => {
    assert.throws(() => splitSignature('a{sv'), /unterminated/);
    assert.throws(() => splitSignature('z'), /bad D-Bus signature/);
    const bytes = encodeMessage({
      type: MessageType.MethodReturn,
      flags: 0,
      serial: 9,
      signature: 's',
      body: ['hello'],
    });
    assert.throws(() => decodeMessage(bytes.subarray(0, bytes.length - 3)), /truncated/);
  });

  it('escapes unit names into systemd object paths and condition titles', () => {
    assert.equal(unitObjectPath('kubelet.service'), '/org/freedesktop/systemd1/unit/kubelet_2eservice');
    assert.equal(
      unitObjectPath('systemd-timesyncd.service'),
      '/org/freedesktop/systemd1/unit/systemd_2dtimesyncd_2eservice',
    );
    assert.equal(unitTitle('kubelet.service'), 'Kubelet');
    assert.equal(unitTitle('systemd-timesyncd.service'), 'SystemdTimesyncd');
  });
});

describe('D-Bus client against a fake bus', async () => {
  const bus = await FakeDbus.start(await tempDir());
  after(() => bus.close());

  it('authenticates with EXTERNAL and the hex uid, says Hello, ignores signals and reads properties', async () => {
    bus.setUnit('/u', { ActiveState: 'active', SubState: 'running', NRestarts: 3 });
    const conn = await DbusConnection.open(bus.path, 1000, new AbortController().signal);
    try {
      assert.equal(bus.authLines.at(-1), 'AUTH EXTERNAL 31303030');
      assert.equal(
        await conn.getProperty(
          'org.freedesktop.systemd1',
          '/u',
          'org.freedesktop.systemd1.Unit',
          'ActiveState',
        ),
        'active',
      );
      assert.equal(
        await conn.getProperty(
          'org.freedesktop.systemd1',
          '/u',
          'org.freedesktop.systemd1.Service',
          'NRestarts',
        ),
        3,
      );
      await assert.rejects(
        conn.getProperty('org.freedesktop.systemd1', '/u', 'org.freedesktop.systemd1.Unit', 'Nope'),
        (err: unknown) =>
          err instanceof DbusError && err.dbusName === 'org.freedesktop.DBus.Error.UnknownProperty',
      );
    } finally {
      conn.close();
    }
    const get = bus.calls.find((c) => c.member === 'Get');
    assert.equal(get?.destination, 'org.freedesktop.systemd1');
    assert.equal(get?.interface, 'org.freedesktop.DBus.Properties');
  });

  it('fails cleanly when authentication is rejected or the socket is missing', async () => {
    bus.rejectAuth = true;
    try {
      await assert.rejects(
        DbusConnection.open(bus.path, 0, new AbortController().signal),
        /authentication rejected/,
      );
    } finally {
      bus.rejectAuth = false;
    }
    await assert.rejects(
      DbusConnection.open(`${bus.path}.missing`, 0, new AbortController().signal),
      /ENOENT/,
    );
  });

  it('aborts pending calls when the signal fires', async () => {
    bus.hang = true;
    const controller = new AbortController();
    try {
      const conn = await DbusConnection.open(bus.path, 0, controller.signal);
      const pending = conn.getProperty(
        'org.freedesktop.systemd1',
        '/u',
        'org.freedesktop.systemd1.Unit',
        'ActiveState',
      );
      controller.abort(new Error('timed out after 5000ms'));
      await assert.rejects(pending, /timed out after 5000ms/);
    } finally {
      bus.hang = false;
    }
  });
});
