import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { parseApiserverOverride, parseGoBool, resolveConnection } from '../../../src/kube/config.ts';

const tmp = mkdtempSync(join(tmpdir(), 'npd-config-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

let seq = 0;
function dir(): string {
  const d = join(tmp, String(seq++));
  mkdirSync(d, { recursive: true });
  return d;
}

/** A service-account directory like the one kubelet projects into the pod. */
function serviceAccount(token = 'sa-token\n'): string {
  const d = dir();
  writeFileSync(join(d, 'token'), token);
  writeFileSync(join(d, 'ca.crt'), 'CA PEM');
  return d;
}

const IN_CLUSTER = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

function kubeconfig(d: string, name: string, body: string[]): string {
  const path = join(d, name);
  writeFileSync(path, body.join('\n'));
  return path;
}

function simpleKubeconfig(d: string, name: string, ctx: string, server: string, user: string[]): string {
  return kubeconfig(d, name, [
    `current-context: ${ctx}`,
    'clusters:',
    `- name: ${ctx}-cluster`,
    '  cluster:',
    `    server: ${server}`,
    'contexts:',
    `- name: ${ctx}`,
    `  context: {cluster: ${ctx}-cluster, user: ${ctx}-user}`,
    'users:',
    `- name: ${ctx}-user`,
    '  user:',
    ...user.map((l) => `    ${l}`),
  ]);
}

describe('parseApiserverOverride', () => {
  it('decodes NPD query parameters with their defaults', () => {
    assert.deepEqual(parseApiserverOverride('http://10.0.0.1:8080?inClusterConfig=false'), {
      server: 'http://10.0.0.1:8080',
      inClusterConfig: false,
      insecure: false,
      auth: undefined,
      useServiceAccount: false,
    });
    assert.deepEqual(
      parseApiserverOverride(
        'HTTPS://api.example:443/ignored?insecure=true&auth=/etc/kc&useServiceAccount=1',
      ),
      {
        server: 'https://api.example:443',
        inClusterConfig: true,
        insecure: true,
        auth: '/etc/kc',
        useServiceAccount: true,
      },
    );
  });

  it('accepts a URI with only a query, like Go url.Parse', () => {
    const o = parseApiserverOverride('?inClusterConfig=false&insecure=T');
    assert.equal(o.server, undefined);
    assert.equal(o.inClusterConfig, false);
    assert.equal(o.insecure, true);
  });

  it('rejects booleans Go strconv.ParseBool rejects', () => {
    assert.throws(() => parseApiserverOverride('http://h?insecure=yes'), /insecure: strconv.ParseBool/);
    assert.equal(parseGoBool('F'), false);
    assert.throws(() => parseGoBool('tRuE'));
  });

  it('rejects an unparsable URI', () => {
    assert.throws(() => parseApiserverOverride('http://[::1?x=1'), /invalid URI/);
  });
});

describe('resolveConnection', () => {
  it('runs standalone when no cluster config is found', async () => {
    assert.equal(await resolveConnection({ env: {}, serviceAccountDir: dir() }), undefined);
    const empty = dir();
    assert.equal(await resolveConnection({ env: IN_CLUSTER, serviceAccountDir: empty }), undefined);
  });

  it('uses the in-cluster service account, always over https', async () => {
    const sa = serviceAccount();
    const env = { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '8080' };
    const conn = await resolveConnection({ env, serviceAccountDir: sa });
    assert.equal(conn?.source, 'in-cluster');
    assert.equal(conn?.server, 'https://[fd00::1]:8080');
    assert.equal(conn?.tls.ca?.toString(), 'CA PEM');
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer sa-token' });
  });

  it('re-reads a rotated service-account token after a minute', async () => {
    const sa = serviceAccount('old');
    const clock = new FakeClock();
    const conn = await resolveConnection({ env: IN_CLUSTER, serviceAccountDir: sa, clock });
    writeFileSync(join(sa, 'token'), 'new');
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer old' });
    clock.advance(60_000);
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer new' });
  });

  it('overrides the in-cluster server and drops the CA when insecure', async () => {
    const sa = serviceAccount();
    const conn = await resolveConnection({
      apiserverOverride: 'https://10.0.0.9:6443?insecure=true',
      env: IN_CLUSTER,
      serviceAccountDir: sa,
    });
    assert.equal(conn?.source, 'apiserver-override');
    assert.equal(conn?.server, 'https://10.0.0.9:6443');
    assert.equal(conn?.tls.insecureSkipTLSVerify, true);
    assert.equal(conn?.tls.ca, undefined);
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer sa-token' });
  });

  it('fails like NPD when the override wants in-cluster config outside a cluster', async () => {
    await assert.rejects(
      resolveConnection({ apiserverOverride: 'http://10.0.0.1:8080', env: {}, serviceAccountDir: dir() }),
      /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined/,
    );
  });

  it('connects to the override host without credentials when inClusterConfig=false', async () => {
    const conn = await resolveConnection({
      apiserverOverride: 'http://10.0.0.1:8080?inClusterConfig=false',
      env: IN_CLUSTER,
      serviceAccountDir: serviceAccount(),
    });
    assert.equal(conn?.server, 'http://10.0.0.1:8080');
    assert.deepEqual(await conn?.authHeaders(), {});
  });

  it('adds the service-account token when useServiceAccount=true', async () => {
    const conn = await resolveConnection({
      apiserverOverride: 'https://10.0.0.1:6443?inClusterConfig=false&useServiceAccount=true',
      env: {},
      serviceAccountDir: serviceAccount('sa-token'),
    });
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer sa-token' });
  });

  it('requires a server', async () => {
    await assert.rejects(
      resolveConnection({ apiserverOverride: '?inClusterConfig=false', env: {} }),
      /invalid kubernetes master url/,
    );
  });

  it('loads the auth= kubeconfig and, like NPD, ignores the override host', async () => {
    const d = dir();
    const path = simpleKubeconfig(d, 'kc', 'a', 'https://from-kubeconfig:6443', ['token: t1']);
    const conn = await resolveConnection({
      apiserverOverride: `https://ignored:1?inClusterConfig=false&auth=${encodeURIComponent(path)}`,
      env: {},
    });
    assert.equal(conn?.server, 'https://from-kubeconfig:6443');
    assert.equal(conn?.source, 'apiserver-override');
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer t1' });
  });

  it('prefers --kubeconfig over KUBECONFIG over in-cluster', async () => {
    const d = dir();
    const flag = simpleKubeconfig(d, 'flag', 'f', 'https://flag', ['token: f']);
    const envFile = simpleKubeconfig(d, 'env', 'e', 'https://env', ['token: e']);
    const env = { ...IN_CLUSTER, KUBECONFIG: envFile };
    const sa = serviceAccount();
    assert.equal(
      (await resolveConnection({ kubeconfig: flag, env, serviceAccountDir: sa }))?.server,
      'https://flag',
    );
    assert.equal((await resolveConnection({ env, serviceAccountDir: sa }))?.server, 'https://env');
    const missing = { ...IN_CLUSTER, KUBECONFIG: join(d, 'nope') };
    assert.equal((await resolveConnection({ env: missing, serviceAccountDir: sa }))?.source, 'in-cluster');
  });

  it('merges a KUBECONFIG list with first-wins rules and resolves relative paths', async () => {
    const d1 = dir();
    const d2 = dir();
    writeFileSync(join(d1, 'ca.pem'), 'CA1');
    const first = kubeconfig(d1, 'one', [
      'current-context: b',
      'clusters:',
      '- {name: shared, cluster: {server: "https://first/", certificate-authority: ca.pem}}',
    ]);
    const second = kubeconfig(d2, 'two', [
      'current-context: ignored',
      'clusters:',
      '- {name: shared, cluster: {server: "https://second"}}',
      'contexts:',
      '- {name: b, context: {cluster: shared, user: u}}',
      'users:',
      '- {name: u, user: {username: admin, password: pw, as: someone}}',
    ]);
    const conn = await resolveConnection({ env: { KUBECONFIG: `${first}:${second}` } });
    assert.equal(conn?.server, 'https://first');
    assert.equal(conn?.tls.ca?.toString(), 'CA1');
    assert.deepEqual(await conn?.authHeaders(), {
      authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}`,
      'impersonate-user': 'someone',
    });
  });

  it('explains a kubeconfig without a usable context', async () => {
    const d = dir();
    const path = kubeconfig(d, 'bad', ['current-context: x', 'contexts: []']);
    await assert.rejects(resolveConnection({ kubeconfig: path, env: {} }), /context "x" not found/);
  });

  it('prefers a kubeconfig tokenFile over the inline token', async () => {
    const d = dir();
    writeFileSync(join(d, 'tok'), 'from-file\n');
    const path = simpleKubeconfig(d, 'kc', 'a', 'https://x', ['token: inline', 'tokenFile: tok']);
    const conn = await resolveConnection({ kubeconfig: path, env: {} });
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer from-file' });
  });

  it("runs exec users' credential plugins", async () => {
    const d = dir();
    const script =
      "console.log(JSON.stringify({apiVersion:'client.authentication.k8s.io/v1',kind:'ExecCredential',status:{token:'exec-token'}}))";
    const path = simpleKubeconfig(d, 'kc', 'a', 'https://x', [
      'exec:',
      '  apiVersion: client.authentication.k8s.io/v1',
      `  command: ${JSON.stringify(process.execPath)}`,
      `  args: ["-e", ${JSON.stringify(script)}]`,
      '  interactiveMode: Never',
    ]);
    const conn = await resolveConnection({ kubeconfig: path, env: {} });
    assert.deepEqual(await conn?.authHeaders(), { authorization: 'Bearer exec-token' });
  });
});

describe('resolveConnection validation', () => {
  it('rejects a server that is not an http(s) URL', async () => {
    const d = mkdtempSync(join(tmp, 'bad-'));
    const path = join(d, 'kc');
    writeFileSync(
      path,
      'current-context: a\nclusters: [{name: c, cluster: {server: "10.0.0.1:6443"}}]\ncontexts: [{name: a, context: {cluster: c}}]\n',
    );
    await assert.rejects(resolveConnection({ kubeconfig: path, env: {} }), /is not an http\(s\) URL/);
  });
});
