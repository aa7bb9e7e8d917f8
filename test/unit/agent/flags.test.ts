import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions } from '../../../src/agent/options.ts';
import { type FlagSpec, parseFlags } from '../../../src/config/flag-parser.ts';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseOptions(argv, env, 'host-from-os');

describe('parseFlags (pflag syntax)', () => {
  const SPECS: FlagSpec[] = [
    { name: 'name', kind: 'string', help: '' },
    { name: 'on', kind: 'bool', help: '' },
    { name: 'files', kind: 'list', help: '' },
  ];

  it('accepts --flag=value and --flag value, last one wins', () => {
    const p = parseFlags(['--name=a', '--name', 'b'], SPECS);
    assert.deepEqual(p.errors, []);
    assert.equal(p.values.get('name'), 'b');
  });

  it('does not let a bool flag consume the next argument', () => {
    const p = parseFlags(['--on', 'false'], SPECS);
    assert.equal(p.values.get('on'), 'true');
    assert.deepEqual(p.positional, ['false']);
  });

  it('keeps an = inside the value and takes a value that starts with a dash', () => {
    const p = parseFlags(['--name=a=b', '--files', '-x'], SPECS);
    assert.equal(p.values.get('name'), 'a=b');
    assert.deepEqual(p.values.get('files'), ['-x']);
  });

  it('splits lists on commas and appends repeated flags', () => {
    const p = parseFlags(['--files=a,b', '--files', 'c', '--files=,d,'], SPECS);
    assert.deepEqual(p.values.get('files'), ['a', 'b', 'c', 'd']);
  });

  it('reports unknown flags and missing arguments, and passes positionals and everything after --', () => {
    const p = parseFlags(['run', '--bogus=1', '-', '--', '--name', 'x', '--name'], SPECS);
    assert.deepEqual(p.errors, ['unknown flag: --bogus']);
    assert.deepEqual(p.positional, ['run', '-', '--name', 'x', '--name']);
    assert.deepEqual(parseFlags(['--name'], SPECS).errors, ['flag needs an argument: --name']);
  });

  it('rejects a bool value that is not a boolean', () => {
    assert.equal(parseFlags(['--on=yes'], SPECS).errors.length, 1);
  });

  it('accepts every boolean spelling of Go strconv.ParseBool, as pflag does', {}, () => {
    for (const v of ['1', 't', 'T', 'TRUE', 'True', '0', 'f', 'F', 'FALSE', 'False']) {
      assert.deepEqual(parseFlags([`--on=${v}`], SPECS).errors, [], v);
    }
  });
});

describe('parseOptions (NPD flags)', () => {
  it("has NPD's defaults", () => {
    const { options, errors, ignored } = parse([]);
    assert.deepEqual(errors, []);
    assert.deepEqual(ignored, []);
    assert.equal(options.port, 20256);
    assert.equal(options.prometheusPort, 20257);
    assert.equal(options.address, '127.0.0.1');
    assert.equal(options.prometheusAddress, '127.0.0.1');
    assert.equal(options.heartbeatPeriodMs, 300_000);
    assert.equal(options.enableK8sExporter, true);
    assert.equal(options.writeEvents, true);
    assert.equal(options.updateNodeConditions, true);
    assert.equal(options.eventNamespace, '');
    assert.equal(options.apiserverOverride, '');
    assert.deepEqual(options.systemLogMonitors, []);
    assert.deepEqual(options.customPluginMonitors, []);
    assert.deepEqual(options.systemStatsMonitors, []);
    assert.equal(options.nodeName, 'host-from-os');
    assert.equal(options.version, false);
  });

  it('parses both value syntaxes, bools and durations', () => {
    const { options, errors } = parse([
      '--port=0',
      '--prometheus-port',
      '9100',
      '--prometheus-address=0.0.0.0',
      '--enable-k8s-exporter=false',
      '--k8s-exporter-heartbeat-period',
      '1h30m',
      '--event-namespace=kube-system',
      '--version',
    ]);
    assert.deepEqual(errors, []);
    assert.equal(options.port, 0);
    assert.equal(options.prometheusPort, 9100);
    assert.equal(options.prometheusAddress, '0.0.0.0');
    assert.equal(options.enableK8sExporter, false);
    assert.equal(options.heartbeatPeriodMs, 5_400_000);
    assert.equal(options.eventNamespace, 'kube-system');
    assert.equal(options.version, true);
  });

  it('reads the NPD image ENTRYPOINT list and repeated list flags', () => {
    const { options, errors } = parse([
      '--config.system-log-monitor=/config/kernel-monitor.json,/config/readonly-monitor.json',
      '--config.system-log-monitor',
      '/config/docker-monitor.json',
      '--config.custom-plugin-monitor=/config/a.json',
    ]);
    assert.deepEqual(errors, []);
    assert.deepEqual(options.systemLogMonitors, [
      '/config/kernel-monitor.json',
      '/config/readonly-monitor.json',
      '/config/docker-monitor.json',
    ]);
    assert.deepEqual(options.customPluginMonitors, ['/config/a.json']);
  });

  it('accepts the deprecated aliases alone, and reports combining them with the new flag', () => {
    const alone = parse(['--system-log-monitors=a.json', '--custom-plugin-monitors=b.json']);
    assert.deepEqual(alone.errors, []);
    assert.deepEqual(alone.options.systemLogMonitors, ['a.json']);
    assert.deepEqual(alone.options.customPluginMonitors, ['b.json']);
    const both = parse(['--system-log-monitors=a.json', '--config.system-log-monitor=c.json']);
    assert.equal(both.errors.length, 1);
    assert.match(both.errors[0] ?? '', /--config\.system-log-monitor and its deprecated alias/);
    const both2 = parse(['--custom-plugin-monitors=a.json', '--config.custom-plugin-monitor=c.json']);
    assert.match(both2.errors[0] ?? '', /--config\.custom-plugin-monitor and its deprecated alias/);
  });

  it('skips duplicate config paths', () => {
    const { options } = parse([
      '--config.system-log-monitor=a.json,a.json',
      '--config.system-log-monitor=a.json',
    ]);
    assert.deepEqual(options.systemLogMonitors, ['a.json']);
  });

  it('reports unknown flags and bad values', () => {
    const { errors } = parse([
      '--bogus',
      '--port=abc',
      '--k8s-exporter-heartbeat-period=5',
      '--enable-k8s-exporter=maybe',
    ]);
    assert.ok(errors.includes('unknown flag: --bogus'));
    assert.ok(errors.some((e) => /invalid argument "abc" for --port: expected an integer/.test(e)));
    assert.ok(errors.some((e) => /--k8s-exporter-heartbeat-period: invalid duration "5"/.test(e)));
    assert.ok(errors.some((e) => /--enable-k8s-exporter/.test(e)));
    assert.equal(errors.length, 4);
  });

  it('keeps quoted text out of the evidence unless --trust-quoted-text', () => {
    assert.equal(parse([]).options.trustQuotedText, false);
    assert.equal(parse(['--trust-quoted-text']).options.trustQuotedText, true);
  });

  it("checks journal entries' writers unless --trust-journal-writers", () => {
    assert.equal(parse([]).options.trustJournalWriters, false);
    assert.equal(parse(['--trust-journal-writers']).options.trustJournalWriters, true);
  });

  it('takes no log file line as evidence unless --trust-file-writers', () => {
    assert.equal(parse([]).options.trustFileWriters, false);
    assert.equal(parse(['--trust-file-writers']).options.trustFileWriters, true);
  });

  it('keeps subsystem conditions off by default and checks --subsystem-window and --subsystem-hold', () => {
    const off = parse([]).options;
    assert.equal(off.subsystemConditions, false);
    assert.equal(off.subsystemWindowMs, 10 * 60_000);
    assert.equal(off.subsystemHoldMs, 2 * 60_000);
    const on = parse(['--subsystem-conditions', '--subsystem-window=90s', '--subsystem-hold=0s']);
    assert.deepEqual(on.errors, []);
    assert.equal(on.options.subsystemConditions, true);
    assert.equal(on.options.subsystemWindowMs, 90_000);
    assert.equal(on.options.subsystemHoldMs, 0);
    assert.deepEqual(parse(['--subsystem-window=0']).errors, ['--subsystem-window must be greater than 0']);
    assert.deepEqual(parse(['--subsystem-hold=-1s']).errors, [
      '--subsystem-hold: duration "-1s" must not be negative',
    ]);
  });

  it("rejects a non-integer port, as pflag's int flag does", () => {
    assert.equal(parse(['--port=1.5']).errors.length, 1);
  });

  it('takes the node name from --hostname-override, then NODE_NAME, then the hostname', () => {
    assert.equal(
      parse(['--hostname-override=flag-node'], { NODE_NAME: 'env-node' }).options.nodeName,
      'flag-node',
    );
    assert.equal(parse([], { NODE_NAME: 'env-node' }).options.nodeName, 'env-node');
    assert.equal(parse([], { NODE_NAME: '' }).options.nodeName, 'host-from-os');
    assert.equal(parse([]).options.nodeName, 'host-from-os');
  });

  it('accepts klog flags and reports them as ignored', () => {
    const { options, errors, ignored } = parse(['--v=2', '--logtostderr', '--vmodule', 'foo=3', '--port=1']);
    assert.deepEqual(errors, []);
    assert.deepEqual([...ignored].sort(), ['logtostderr', 'v', 'vmodule']);
    assert.equal(options.port, 1);
    assert.deepEqual(parse(['--v', '4', '--logtostderr=false']).ignored.length, 2);
    assert.deepEqual(parse(['--exporter.stackdriver=/x.json']).ignored, ['exporter.stackdriver']);
  });

  it("accepts klog v2's whole flag set, single or double dash, and its bools take no argument", () => {
    const klog = [
      '--log_dir=/var/log',
      '--log_file',
      '/var/log/npd.log',
      '--log_file_max_size=1800',
      '--alsologtostderr',
      '--add_dir_header',
      '--skip_headers',
      '--skip_log_headers',
      '--one_output',
      '-stderrthreshold=INFO',
      '--log_backtrace_at=x.go:1',
      '--legacy_stderr_threshold_behavior=false',
      '--port=1',
    ];
    const { options, errors, ignored, positional } = parse(klog);
    assert.deepEqual(errors, []);
    assert.deepEqual(positional, []);
    assert.equal(options.port, 1);
    assert.equal(ignored.length, 11);
    assert.deepEqual(
      parse(['--log_dirs=/x']).errors,
      ['unknown flag: --log_dirs'],
      'a typo is still an error',
    );
  });

  it('takes --log-format json or text, and nothing else', () => {
    assert.equal(parse([]).options.logFormat, undefined);
    assert.equal(parse(['--log-format=text']).options.logFormat, 'text');
    assert.equal(parse(['--log-format=json']).options.logFormat, 'json');
    assert.deepEqual(parse(['--log-format=klog']).errors, ['--log-format must be json or text, not "klog"']);
  });
  it('rejects ports outside 0-65535 and bind addresses that are not IP addresses, naming the flag', () => {
    const { errors } = parse(['--port=99999', '--prometheus-port=-1', '--address=not-an-ip']);
    assert.deepEqual(errors, [
      '--address: "not-an-ip" is not an IP address',
      '--port: 99999 is not a port number (0-65535)',
      '--prometheus-port: -1 is not a port number (0-65535)',
    ]);
    const ok = parse([
      '--address=0.0.0.0',
      '--prometheus-address=::1',
      '--port=65535',
      '--prometheus-port=0',
    ]);
    assert.deepEqual(ok.errors, []);
    assert.deepEqual(parse(['--address=localhost']).errors, []);
  });

  it('rejects negative durations', () => {
    const { errors } = parse(['--config-reload-period=-5s', '--shutdown-grace-period=-1s']);
    assert.deepEqual(errors, [
      '--shutdown-grace-period: duration "-1s" must not be negative',
      '--config-reload-period: duration "-5s" must not be negative',
    ]);
    assert.equal(parse(['--config-reload-period=0']).options.configReloadMs, 0);
  });
});

describe('--extra-conditions', () => {
  it('is off by default and on with =true; the last one wins, as a component appends it', () => {
    assert.equal(parse([]).options.extraConditions, false);
    assert.equal(parse(['--extra-conditions=true']).options.extraConditions, true);
    assert.equal(
      parse(['--extra-conditions=false', '--extra-conditions=true']).options.extraConditions,
      true,
    );
  });

  it('refuses a taint on a condition the Node would not show, naming the flag', () => {
    const taint = '--taint-on-condition=FilesystemSpaceLow=example.com/disk:NoSchedule';
    const hidden = parse([taint]);
    assert.equal(hidden.errors.length, 1);
    assert.match(hidden.errors[0] ?? '', /--taint-on-condition=FilesystemSpaceLow=.*--extra-conditions=true/);
    assert.deepEqual(
      parse([taint, '--extra-conditions=true']).errors,
      [],
      'control: with the switch it is fine',
    );
    const shown = parse(['--taint-on-condition=KernelDeadlock=example.com/deadlock:NoSchedule']);
    assert.deepEqual(shown.errors, [], 'control: a default row may be tainted on');
  });
});
