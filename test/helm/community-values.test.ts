// A values file written for the community chart (deliveryhero node-problem-detector) keeps working:
// its keys map onto this chart's, and NOTES lists each as deprecated with its new key.
//   node --import tsx --test test/helm/community-values.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentContainer, one, podSpec } from '../deploy/support.ts';
import { helmTemplate, renderNotes, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();

const COMMUNITY = {
  settings: {
    log_monitors: ['/config/kernel-monitor.json', '/config/docker-monitor.json'],
    custom_plugin_monitors: [],
    extraArgs: ['--event-namespace=npd'],
    heartBeatPeriod: '5m0s',
    prometheus_address: '0.0.0.0',
    prometheus_port: 20258,
  },
  metrics: { enabled: true },
  env: [{ name: 'FOO', value: 'bar' }],
  labels: { team: 'sre' },
  annotations: { 'example.com/owner': 'sre' },
  securityContext: { privileged: false },
  logDir: { host: '/var/log', pod: '' },
  hostPID: false,
  updateStrategy: 'OnDelete',
};

describe('community chart values', { skip }, () => {
  test('map onto this chart: monitors, args, port, Service, env, pod labels and annotations, privilege, strategy', async () => {
    const docs = await helmTemplate(tools!, COMMUNITY);
    const ds = one(docs, 'DaemonSet');
    const c = agentContainer(ds);
    for (const arg of [
      '--config.system-log-monitor=/config/kernel.yaml,/config/docker.yaml',
      '--prometheus-port=20258',
      '--event-namespace=npd',
      '--k8s-exporter-heartbeat-period=5m0s',
    ]) {
      assert.ok(c.args.includes(arg), `${arg} in ${c.args.join(' ')}`);
    }
    assert.ok(c.env.some((e) => e.name === 'FOO' && e.value === 'bar'));
    const template = (ds.spec as { template: { metadata: { labels: object; annotations: object } } })
      .template;
    assert.equal((template.metadata.labels as Record<string, string>).team, 'sre');
    assert.equal((template.metadata.annotations as Record<string, string>)['example.com/owner'], 'sre');
    assert.equal(c.securityContext.privileged, false);
    assert.deepEqual((ds.spec as { updateStrategy: object }).updateStrategy, { type: 'OnDelete' });
    const svc = one(docs, 'Service');
    assert.equal(
      (svc.spec as { ports: { port: number }[] }).ports[0]?.port,
      20258,
      'metrics.enabled: the Service',
    );
    assert.equal(podSpec(ds).hostPID, undefined, 'hostPID is not taken over');
  });

  test('NOTES names every mapped or ignored key with its replacement; none without them', async () => {
    const notes = await renderNotes(tools!, COMMUNITY);
    for (const line of [
      'settings.log_monitors -> monitors.systemLog',
      'settings.extraArgs -> extraArgs',
      'settings.heartBeatPeriod -> extraArgs',
      'settings.prometheus_port -> ports.metrics',
      'settings.prometheus_address: ignored',
      'metrics.enabled -> metrics.service.enabled',
      'env -> extraEnv',
      'labels -> podLabels',
      'annotations -> podAnnotations',
      'securityContext.privileged -> privileged',
      'updateStrategy: <type> -> updateStrategy.type',
      'logDir: ignored',
      'hostPID: ignored',
    ]) {
      assert.ok(notes.includes(line), `${line} in:\n${notes}`);
    }
    assert.doesNotMatch(await renderNotes(tools!, {}), /DEPRECATED/);
  });
});
