import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { helpText, parseOptions } from '../../../src/agent/options.ts';
import { hostPaths } from '../../../src/host/paths.ts';

const parse = (argv: string[]) => parseOptions(argv, {}, 'node-1');

describe('--host-proc', () => {
  it('defaults to <host-root>/proc, where NPD-style setups and a run on the node find the host /proc', () => {
    assert.equal(parse([]).options.hostProc, '/proc');
    assert.equal(parse(['--host-root=/host']).options.hostProc, '/host/proc');
    assert.equal(parse(['--host-proc=', '--host-root=/host']).options.hostProc, '/host/proc');
  });

  it("takes an absolute path, whatever --host-root is (the DaemonSet: the pod's own /proc)", () => {
    const { options, errors } = parse(['--host-root=/host', '--host-proc=/proc']);
    assert.deepEqual(errors, []);
    assert.equal(options.hostRoot, '/host');
    assert.equal(options.hostProc, '/proc');
  });

  it('rejects a relative path, naming the flag', () => {
    assert.deepEqual(parse(['--host-proc=proc']).errors, ['--host-proc: "proc" is not an absolute path']);
  });

  it('is in --help with what it does not move: the host mount table', () => {
    assert.match(helpText(), /--host-proc .*default <host-root>\/proc.*<host-root>\/proc\/1\/mountinfo/);
  });
});

describe('hostPaths', () => {
  it('reads global /proc files from the proc root, the host mount table below the host root', () => {
    assert.deepEqual(hostPaths('/host', '/proc'), {
      root: '/host',
      proc: '/proc',
      initMountinfo: '/host/proc/1/mountinfo',
      sys: '/host/sys',
      dev: '/host/dev',
    });
    assert.equal(hostPaths('/').proc, '/proc', 'the default proc root is below the host root');
    assert.equal(hostPaths('/').initMountinfo, '/proc/1/mountinfo');
  });
});
