// The release command (deploy/release.sh, `npm run release`) against a real registry on 127.0.0.1:
// it pushes an OCI image index of both platforms, an SPDX SBOM attestation per platform, a cosign
// signature and the chart; everything is pulled back and verified with the real crane, cosign and helm.
// The signing key is made here; a second key is the negative control of every verification.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { containerSkip, runImage } from '../container/podman.ts';
import { run } from '../e2e/harness/processes.ts';
import { REPO } from '../support/agent-process.ts';
import { ensureGoTools } from '../support/go-tools.ts';
import { parseVars } from '../support/script-vars.ts';
import { architecture, expectedGolden, pull, replayGolden, standaloneHealthz } from './emulated.ts';
import { ensureReleaseTools, type Registry, type ReleaseTools, startRegistry } from './tools.ts';

const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const PLATFORMS = ['linux/amd64', 'linux/arm64'];
const PASSWORD = 'release-test';
const skip = containerSkip();

interface Released {
  readonly ref: string;
  readonly digest: string;
  readonly chart: string;
  readonly krewManifest: string;
}

/** Where the krew manifest says the plugin archive is published (krew.test.ts installs from one). */
const KREW_BASE = 'https://example.invalid/npd/releases';

async function keyPair(cosign: string, dir: string, name: string): Promise<string> {
  const prefix = join(dir, name);
  const r = await run(cosign, ['generate-key-pair', `--output-key-prefix=${prefix}`], {
    env: { ...process.env, COSIGN_PASSWORD: PASSWORD },
  });
  assert.equal(r.code, 0, r.stderr);
  return prefix;
}

describe('release to a registry on 127.0.0.1', { skip, timeout: 90 * 60_000 }, () => {
  let tools: ReleaseTools;
  let registry: Registry;
  let dir: string;
  let released: Released;
  let image: string;
  const http = ['--allow-http-registry', '--allow-insecure-registry', '--insecure-ignore-tlog=true'];
  const cosign = (args: string[]) =>
    run(tools.cosign, args, { env: { ...process.env, COSIGN_PASSWORD: PASSWORD }, timeoutMs: 120_000 });

  before(async () => {
    tools = await ensureReleaseTools();
    registry = await startRegistry(tools.crane);
    dir = mkdtempSync(join(tmpdir(), 'npd-release-'));
    await keyPair(tools.cosign, dir, 'release');
    await keyPair(tools.cosign, dir, 'other');
    const args = [
      `--registry=${registry.host}/npd`,
      '--plain-http',
      `--key=${join(dir, 'release.key')}`,
      `--krew-uri-base=${KREW_BASE}`,
    ];
    const r = await run('bash', [join(REPO, 'deploy', 'release.sh'), ...args], {
      env: { ...process.env, COSIGN_PASSWORD: PASSWORD },
      timeoutMs: 80 * 60_000,
    });
    assert.equal(r.code, 0, r.stderr.slice(-6000));
    const vars = parseVars(r.stdout);
    released = {
      ref: vars.get('REF') ?? '',
      digest: vars.get('DIGEST') ?? '',
      chart: vars.get('CHART') ?? '',
      krewManifest: vars.get('KREW_MANIFEST') ?? '',
    };
    image = `${registry.host}/npd/node-problem-detector`;
    assert.equal(released.ref, `${image}:${VERSION}`, r.stdout);
  });
  after(async () => {
    await registry?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the tag is an OCI image index with one image per platform', async () => {
    const r = await run(tools.crane, ['manifest', '--insecure', released.ref]);
    assert.equal(r.code, 0, r.stderr);
    const index = JSON.parse(r.stdout) as {
      mediaType: string;
      manifests: { platform?: { os: string; architecture: string } }[];
    };
    assert.equal(index.mediaType, 'application/vnd.oci.image.index.v1+json');
    const platforms = index.manifests.map((m) => `${m.platform?.os}/${m.platform?.architecture}`);
    assert.deepEqual(platforms.sort(), PLATFORMS);
  });

  test('the kubectl plugin is packaged for krew: the archive beside a manifest naming it', () => {
    const text = readFileSync(released.krewManifest, 'utf8');
    assert.match(text, new RegExp(`uri: ${KREW_BASE}/kubectl-npd-${VERSION}\\.tar\\.gz`));
    assert.match(text, new RegExp(`version: v${VERSION}`));
    const archive = join(dirname(released.krewManifest), `kubectl-npd-${VERSION}.tar.gz`);
    const sha = createHash('sha256').update(readFileSync(archive)).digest('hex');
    assert.match(text, new RegExp(`sha256: ${sha}`));
  });

  test('each platform pulls at most 60 MiB: the compressed layers and config its manifest lists', async (t) => {
    for (const ref of await platformRefs()) {
      const r = await run(tools.crane, ['manifest', '--insecure', ref]);
      assert.equal(r.code, 0, r.stderr);
      const m = JSON.parse(r.stdout) as { config: { size: number }; layers: { size: number }[] };
      const mib = (m.config.size + m.layers.reduce((n, l) => n + l.size, 0)) / 2 ** 20;
      t.diagnostic(`${ref}: ${mib.toFixed(1)} MiB`);
      assert.ok(mib <= 60, `${ref}: ${mib.toFixed(1)} MiB`);
    }
  });

  test('the index and each image verify with the release key, and not with another', async () => {
    for (const ref of [`${image}@${released.digest}`, ...(await platformRefs())]) {
      const ok = await cosign(['verify', `--key=${join(dir, 'release.pub')}`, ...http, ref]);
      assert.equal(ok.code, 0, `${ref}: ${ok.stderr}`);
      const wrong = await cosign(['verify', `--key=${join(dir, 'other.pub')}`, ...http, ref]);
      assert.notEqual(wrong.code, 0, `${ref} verified with a key that did not sign it`);
    }
  });

  test("each platform's SPDX SBOM is attested with the release key and lists the agent's packages", async () => {
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string }>;
    };
    for (const ref of await platformRefs()) {
      const attested = (key: string) =>
        cosign(['verify-attestation', `--key=${join(dir, key)}`, '--type=spdxjson', ...http, ref]);
      const ok = await attested('release.pub');
      assert.equal(ok.code, 0, `${ref}: ${ok.stderr}`);
      const spdx = predicate(ok.stdout);
      assert.match(spdx.spdxVersion, /^SPDX-2\.\d$/);
      const pino = spdx.packages.find((p) => p.name === 'pino');
      assert.equal(
        pino?.versionInfo,
        lock.packages['node_modules/pino']?.version,
        `${ref}: pino not in the SBOM`,
      );
      const wrong = await attested('other.pub');
      assert.notEqual(wrong.code, 0, `${ref}: the SBOM attestation verified with another key`);
    }
  });

  test('helm installs the chart from the registry, its image defaulting to the pushed one', async () => {
    const { helm } = await ensureGoTools();
    const r = await run(helm, ['template', 'npd', released.chart, `--version=${VERSION}`, '--plain-http'], {
      env: { ...process.env, HOME: dir },
    });
    assert.equal(r.code, 0, r.stderr);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as DaemonSetLike);
    const ds = docs.find((d) => d?.kind === 'DaemonSet');
    assert.equal(ds?.spec.template.spec.containers[0]?.image, `${image}:${VERSION}`);
  });

  test('both pulled images run: --version, arm64 under qemu user emulation', () => {
    for (const arch of ['amd64', 'arm64']) {
      const local = pull(released.ref, arch);
      assert.equal(architecture(local), arch);
      const out = runImage(local, ['--network=none'], undefined, ['--version']);
      assert.ok(out.includes(VERSION), `${arch}: ${out}`);
    }
  });

  test('the arm64 image replays the golden corpus byte for byte as amd64 and the expectations', () => {
    const amd64 = replayGolden(pull(released.ref, 'amd64'));
    const arm64 = replayGolden(pull(released.ref, 'arm64'));
    const expected = expectedGolden();
    assert.ok(expected.size >= 20, `only ${expected.size} golden cases`);
    for (const [name, want] of expected) {
      assert.equal(amd64.get(name), want, `amd64 ${name}`);
      assert.equal(arm64.get(name), want, `arm64 ${name}`);
    }
  });

  test('the arm64 image starts standalone under emulation and /healthz answers 200', async () => {
    assert.equal(await standaloneHealthz(pull(released.ref, 'arm64'), 120_000), 200);
  });

  test("the release refuses a version that is not package.json's", async () => {
    const r = await run('bash', [
      join(REPO, 'deploy', 'release.sh'),
      `--registry=${registry.host}/npd`,
      '--version=9.9.9',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--version=9\.9\.9: package\.json says/);
  });

  test('a version already in the registry is refused before anything is built; the tag keeps its digest', async () => {
    // Issue 38 finding 9: a second run re-published an existing version without a word.
    const r = await run(
      'bash',
      [join(REPO, 'deploy', 'release.sh'), `--registry=${registry.host}/npd`, '--plain-http'],
      { timeoutMs: 10 * 60_000 },
    );
    assert.equal(r.code, 2, r.stderr.slice(-2000));
    assert.match(
      r.stderr,
      new RegExp(`image ${image}:${VERSION} exists already \\(sha256:[0-9a-f]{64}\\).*--overwrite`),
    );
    assert.doesNotMatch(r.stderr, /building linux/, 'refused before building');
    const now = await run(tools.crane, ['digest', '--insecure', released.ref]);
    assert.equal(now.stdout.trim(), released.digest, 'the tag still names the released index');
    // The negative control is the release in before(): the same command on a new version published.
  });

  async function platformRefs(): Promise<string[]> {
    const refs: string[] = [];
    for (const p of PLATFORMS) {
      const r = await run(tools.crane, ['digest', '--insecure', `--platform=${p}`, released.ref]);
      assert.equal(r.code, 0, r.stderr);
      refs.push(`${image}@${r.stdout.trim()}`);
    }
    return refs;
  }
});

interface DaemonSetLike {
  kind?: string;
  spec: { template: { spec: { containers: { image?: string }[] } } };
}

interface Spdx {
  spdxVersion: string;
  packages: { name: string; versionInfo?: string }[];
}

/** The SPDX document inside the first DSSE envelope that `cosign verify-attestation` printed. */
function predicate(stdout: string): Spdx {
  const envelope = JSON.parse(stdout.split('\n').find((l) => l.trim().startsWith('{')) ?? '{}') as {
    payload?: string;
  };
  const statement = JSON.parse(Buffer.from(envelope.payload ?? '', 'base64').toString('utf8')) as {
    predicate: Spdx;
  };
  return statement.predicate;
}
