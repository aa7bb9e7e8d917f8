/**
 * Whose journal entries may be evidence (src/sources/journald/trust.ts), decided on entries recorded
 * from a real systemd-journald (test/support/journald.ts, `journalctl -o json`): writers.jsonl holds,
 * in order, systemd-cat's output in init.scope and in smartd.service as root (how the harness writes a
 * unit's output), `logger -t smartd` over the syslog socket and `logger --journald` with
 * SYSLOG_IDENTIFIER=systemd as uid 65534 (setpriv), and journald's own driver message. The second
 * logger also sent `_UID=0` and `_SYSTEMD_UNIT=init.scope`: journald dropped both, as
 * systemd.journal-fields(7) says it does with client-sent trusted fields.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfigs } from '../../../../src/config/load.ts';
import { systemLogConfigKind, validateLogMonitor } from '../../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig, TrustedWriter } from '../../../../src/rules/config.ts';
import { untrustedWriter } from '../../../../src/sources/journald/trust.ts';

type Entry = Record<string, string>;
const WRITERS = fileURLToPath(new URL('../../../fixtures/journal/writers.jsonl', import.meta.url));
const [initScope, smartdService, loggerSyslog, loggerNative, journaldDriver] = readFileSync(WRITERS, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Entry) as [Entry, Entry, Entry, Entry, Entry];

/** A recorded entry as another writer would have it: only the named fields differ. */
const as = (base: Entry, fields: Entry): Entry => ({ ...base, ...fields });
const trusted = (policy: TrustedWriter, e: Entry) => untrustedWriter(policy, e) === undefined;

describe('untrustedWriter on recorded entries', () => {
  it('the recorded uid-65534 entries carry no unit, and not the _UID=0 the writer sent', () => {
    assert.equal(loggerNative._UID, '65534');
    assert.equal(loggerNative._SYSTEMD_UNIT, undefined);
    assert.equal(loggerSyslog._COMM, 'logger');
  });

  it('system (the default): root and journald itself are trusted; uid 65534 is not', () => {
    assert.ok(trusted('system', initScope));
    assert.ok(trusted('system', smartdService));
    assert.ok(trusted('system', journaldDriver));
    assert.equal(
      untrustedWriter('system', loggerSyslog),
      '_TRANSPORT=syslog _SYSTEMD_UNIT=- _UID=65534 _COMM=logger _PID=441 is neither root nor a system service',
    );
    assert.ok(!trusted('system', loggerNative));
  });

  it("system: a system account's service is trusted, a login user's process is not, even in a system unit", () => {
    const chronyd = as(smartdService, { _UID: '998', _SYSTEMD_UNIT: 'chronyd.service', _COMM: 'chronyd' });
    assert.ok(trusted('system', chronyd));
    // A user's cron job runs in cron.service; a user's own manager in user@<uid>.service.
    assert.ok(!trusted('system', as(chronyd, { _UID: '1000', _SYSTEMD_UNIT: 'cron.service' })));
    assert.ok(!trusted('system', as(chronyd, { _UID: '998', _SYSTEMD_UNIT: 'user@998.service' })));
    // A system account outside a service (a container's process in its scope) is not either.
    assert.ok(!trusted('system', as(chronyd, { _SYSTEMD_UNIT: 'cri-containerd-0123.scope' })));
    assert.ok(!trusted('system', as(chronyd, { _UID: '' })));
  });

  it('a field map: every listed field must hold one of its values', () => {
    const smartd = { _SYSTEMD_UNIT: ['smartd.service', 'smartmontools.service'], _UID: ['0'] };
    assert.ok(trusted(smartd, smartdService));
    assert.ok(trusted(smartd, as(smartdService, { _SYSTEMD_UNIT: 'smartmontools.service' })));
    assert.equal(
      untrustedWriter(smartd, loggerSyslog),
      '_TRANSPORT=syslog _SYSTEMD_UNIT=- _UID=65534 _COMM=logger _PID=441 fails trustedWriter _SYSTEMD_UNIT=smartd.service|smartmontools.service',
    );
    // Both fields count: root outside the unit, or the unit's non-root process, is refused.
    assert.ok(!trusted(smartd, as(smartdService, { _SYSTEMD_UNIT: 'other.service' })));
    assert.ok(!trusted(smartd, as(smartdService, { _UID: '1000' })));
  });

  it('any (NPD): every entry', () => {
    assert.ok(trusted('any', loggerSyslog));
    assert.ok(trusted('any', loggerNative));
  });
});

const RULES = fileURLToPath(new URL('../../../../rules/', import.meta.url));

function shipped(name: string): LogMonitorConfig {
  const [loaded] = loadConfigs([{ file: `${RULES}${name}` }], [systemLogConfigKind]);
  return loaded?.config as LogMonitorConfig;
}

/** Each identifier-matched shipped file, with an entry as its real writer stamps it. */
const REAL_WRITERS: Readonly<Record<string, Entry>> = {
  'systemd.yaml': initScope,
  'systemd-counter.yaml': initScope,
  'smartd.yaml': smartdService,
  'abrt.yaml': as(smartdService, { _SYSTEMD_UNIT: 'abrtd.service', SYSLOG_IDENTIFIER: 'abrt-notification' }),
  'clock-chrony.yaml': as(smartdService, { _UID: '998', _SYSTEMD_UNIT: 'chronyd.service' }),
  'clock-journald.yaml': journaldDriver,
  'clock-timesyncd.yaml': as(smartdService, { _UID: '997', _SYSTEMD_UNIT: 'systemd-timesyncd.service' }),
  'systemd-oomd.yaml': as(smartdService, { _UID: '996', _SYSTEMD_UNIT: 'systemd-oomd.service' }),
  'docker.yaml': as(smartdService, { _SYSTEMD_UNIT: 'docker.service' }),
  'docker-counter.yaml': as(smartdService, { _SYSTEMD_UNIT: 'docker.service' }),
};

describe('the shipped journald rule files', () => {
  for (const [file, writer] of Object.entries(REAL_WRITERS)) {
    it(`${file}: its real writer is trusted, logger as uid 65534 under its identifier is not`, () => {
      const config = shipped(file);
      assert.ok(config.pluginConfig.source, 'matched by identifier');
      const policy = config.trustedWriter as TrustedWriter;
      assert.notEqual(policy, 'system', 'a requirement of its own');
      assert.ok(trusted(policy, writer));
      for (const forged of [loggerSyslog, loggerNative]) {
        assert.ok(!trusted(policy, as(forged, { SYSLOG_IDENTIFIER: config.pluginConfig.source as string })));
      }
    });
  }

  it('every identifier-matched file is in the list above; unit-matched ones keep the default', () => {
    const files = journaldFiles();
    const byIdentifier = files.filter((f) => shipped(f).pluginConfig.source !== undefined);
    assert.deepEqual(byIdentifier.sort(), Object.keys(REAL_WRITERS).sort());
    for (const f of files.filter((f) => !byIdentifier.includes(f))) {
      assert.equal(shipped(f).trustedWriter, 'system', f);
      assert.ok(
        trusted('system', as(smartdService, { _SYSTEMD_UNIT: shipped(f).pluginConfig.unit as string })),
      );
    }
  });
});

function journaldFiles(): string[] {
  return readdirSync(RULES).filter((f) => /^plugin: journald$/m.test(readFileSync(`${RULES}${f}`, 'utf8')));
}

describe('trustedWriter in a config', () => {
  const NPD = fileURLToPath(new URL('../../../fixtures/npd-config/', import.meta.url));
  const journald = { plugin: 'journald', pluginConfig: { source: 'smartd' } };
  const issues = (raw: unknown, file = 'my.yaml') => validateLogMonitor(raw, file).issues;

  it("NPD's journald configs load unchanged and get the default, system", () => {
    for (const file of ['systemd-monitor.json', 'docker-monitor.json', 'abrt-adaptor.json']) {
      const [loaded] = loadConfigs([{ file: `${NPD}${file}` }], [systemLogConfigKind]);
      assert.equal((loaded?.config as LogMonitorConfig | undefined)?.trustedWriter, 'system', file);
    }
    const [kmsg] = loadConfigs([{ file: `${NPD}kernel-monitor.json` }], [systemLogConfigKind]);
    assert.ok(kmsg, 'loaded');
    assert.equal((kmsg.config as LogMonitorConfig).trustedWriter, undefined, 'kmsg checks no writer');
  });

  it('takes system, any, and a field map with one value or a list', () => {
    assert.equal(validateLogMonitor({ ...journald, trustedWriter: 'any' }, 'f').config?.trustedWriter, 'any');
    assert.deepEqual(
      validateLogMonitor({ ...journald, trustedWriter: { _UID: '0' } }, 'f').config?.trustedWriter,
      {
        _UID: ['0'],
      },
    );
  });

  it('refuses a field the writer chooses, an empty map and a non-journald plugin, naming the file and field', () => {
    assert.deepEqual(issues({ ...journald, trustedWriter: { SYSLOG_IDENTIFIER: 'smartd' } }), [
      {
        file: 'my.yaml',
        path: 'trustedWriter.SYSLOG_IDENTIFIER',
        message: 'not a field journald sets; use _TRANSPORT, _SYSTEMD_UNIT, _UID, _COMM, _EXE, _PID',
      },
    ]);
    assert.deepEqual(
      issues({ ...journald, trustedWriter: {} }).map((i) => i.path),
      ['trustedWriter'],
    );
    assert.deepEqual(issues({ plugin: 'kmsg', trustedWriter: 'any' }), [
      { file: 'my.yaml', path: 'trustedWriter', message: 'only the journald plugin knows who wrote a line' },
    ]);
    assert.deepEqual(issues({ ...journald, trustedWriter: { _UID: '0' } }), [], 'control: a valid one');
  });
});
