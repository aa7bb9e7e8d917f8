// monitors.* with the community chart's file names: an NPD name with a shipped equivalent resolves
// (and NOTES says it is deprecated), anything not in /config fails `helm install` with the choices,
// instead of a pod that exits 2 on a missing file.
//   node --import tsx --test test/helm/monitors.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentContainer, one } from '../deploy/support.ts';
import { helmTemplate, helmTemplateResult, renderNotes, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();

describe('monitors.* file names', { skip }, () => {
  const systemLogArg = async (systemLog: string[]) =>
    agentContainer(one(await helmTemplate(tools!, { monitors: { systemLog } }), 'DaemonSet')).args.find((a) =>
      a.startsWith('--config.system-log-monitor='),
    );

  test("NPD's names, bare or under /config, resolve to the shipped rules; other absolute paths pass", async () => {
    assert.equal(
      await systemLogArg([
        'kernel-monitor.json',
        '/config/docker-monitor.json',
        'hardware.yaml',
        '/etc/npd/x.json',
      ]),
      '--config.system-log-monitor=/config/kernel.yaml,/config/docker.yaml,/config/hardware.yaml,/etc/npd/x.json',
    );
  });

  test('a name that is not in /config fails the install, naming the key and the choices', async () => {
    const r = await helmTemplateResult(tools!, { monitors: { systemLog: ['kernel-monitr.json'] } });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /monitors\.systemLog: "kernel-monitr\.json" is not in \/config: use a shipped file \(.*kernel\.yaml/,
    );
    const probe = await helmTemplateResult(tools!, { monitors: { probe: ['/config/nope.yaml'] } });
    assert.match(probe.stderr, /monitors\.probe: "\/config\/nope\.yaml" is not in \/config/);
  });

  test('a customMonitors key of an NPD name is the user file, not the mapping', async () => {
    const values = {
      monitors: { systemLog: ['kernel-monitor.json'] },
      customMonitors: { 'kernel-monitor.json': '{}' },
    };
    const ds = one(await helmTemplate(tools!, values), 'DaemonSet');
    assert.ok(agentContainer(ds).args.includes('--config.system-log-monitor=/config/kernel-monitor.json'));
  });

  describe('NOTES', () => {
    const notes = (values: object) => renderNotes(tools!, values);

    test('warn about each NPD name used, and only then', async () => {
      const out = await notes({ monitors: { systemLog: ['kernel-monitor.json', 'hardware.yaml'] } });
      assert.match(out, /DEPRECATED: NPD config names/);
      assert.match(out, /monitors\.systemLog: kernel-monitor\.json -> kernel\.yaml/);
      assert.doesNotMatch(await notes({}), /DEPRECATED/);
    });
  });
});
