// Static checks of the Dockerfile and .dockerignore. test/container builds and runs the image for real;
// prod-install.test.ts repeats the image's install steps without a container engine.
//   node --import tsx --test test/deploy/dockerfile.test.ts
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '..', '..');

interface Instruction {
  readonly op: string;
  readonly args: string;
}
interface Stage {
  readonly from: string;
  /** FROM --platform=..., e.g. $BUILDPLATFORM for a stage that runs on the builder. */
  readonly platform: string | undefined;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
}

/** Instructions of a Dockerfile, with line continuations joined and comments dropped. */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let cur = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (cur === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (cur !== '' && line.trim().startsWith('#')) continue;
    if (line.endsWith('\\')) {
      cur += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push((cur + line).trim());
    cur = '';
  }
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const l of logical) {
    const m = /^(\S+)\s+(.*)$/s.exec(l);
    assert.ok(m, `cannot parse: ${l}`);
    const op = m[1]!.toUpperCase();
    const rest = m[2]!.replace(/\s+/g, ' ').trim();
    if (op === 'FROM') {
      const f = /^(?:--platform=(\S+)\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      assert.ok(f, `FROM ${rest}`);
      stages.push({ platform: f[1], from: f[2]!, name: f[3], instructions: [] });
    } else if (stages.length === 0) {
      assert.equal(op, 'ARG', `only ARG may precede FROM, got ${op}`);
      const [k, v] = rest.split('=');
      args.set(k!, v ?? '');
    } else {
      stages.at(-1)!.instructions.push({ op, args: rest });
    }
  }
  return { args, stages };
}

/** .dockerignore semantics for plain paths: the last matching pattern wins; `!` re-includes. */
function ignored(patterns: readonly string[], path: string): boolean {
  let out = false;
  for (const raw of patterns) {
    const neg = raw.startsWith('!');
    const p = (neg ? raw.slice(1) : raw).replace(/^\/+/, '').replace(/\/+$/, '');
    const glob = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
    if (glob.test(path)) out = !neg;
  }
  return out;
}

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const { args, stages } = parseDockerfile(dockerfile);
const build = stages.find((s) => s.name === 'build');
const rootfs = stages.find((s) => s.name === 'rootfs');
const runtime = stages.at(-1);

describe('Dockerfile', () => {
  test('stages: build on the exactly pinned Node 24 bookworm image (the .ci/node24.sh version), rootfs, scratch', () => {
    assert.deepEqual(
      stages.map((s) => s.name),
      ['build', 'rootfs', 'runtime'],
    );
    const version = args.get('NODE_VERSION');
    assert.ok(version, 'ARG NODE_VERSION');
    assert.match(version, /^24\.\d+\.\d+$/, 'an exact Node 24 version');
    const ci = /NODE24_VERSION:-([\d.]+)/.exec(readFileSync(join(ROOT, '.ci/node24.sh'), 'utf8'));
    assert.equal(version, ci?.[1], 'same Node as CI');
    const ref = ['$', '{NODE_VERSION}'].join(''); // the Dockerfile's literal build argument reference
    assert.equal(build?.from, `node:${ref}-bookworm`);
    // The build runs on the builder's platform and cross-compiles for the target (see the Dockerfile).
    assert.equal(build?.platform, '$BUILDPLATFORM');
    // The runtime runs the build stage's Node binary on files picked from bookworm-slim: no npm, no
    // headers, no package manager (docs/install.md, Size).
    assert.equal(rootfs?.from, ['$', '{DEBIAN_SLIM}'].join(''));
    assert.equal(args.get('DEBIAN_SLIM'), 'debian:bookworm-slim', 'the public multi-arch name by default');
    assert.equal(runtime?.from, 'scratch');
    assert.doesNotMatch(
      dockerfile,
      /^FROM\s+\S*(@sha256:|:latest\b)/im,
      'no digest placeholder or floating tag',
    );
  });

  test('build stage: toolchain for node-gyp, offline headers, non-root user, one npm ci, pruned production tree, build', () => {
    const ins = build!.instructions;
    const idx = (pred: (i: Instruction) => boolean, what: string) => {
      const i = ins.findIndex(pred);
      assert.ok(i >= 0, `build stage lacks ${what}`);
      return i;
    };
    const apt = ins.find((i) => i.op === 'RUN' && i.args.includes('apt-get install'));
    for (const pkg of ['python3', 'make', 'g++'])
      assert.match(apt?.args ?? '', new RegExp(`\\s${pkg.replace('+', '\\+')}(\\s|$)`), pkg);
    const user = idx((i) => i.op === 'USER', 'USER');
    assert.doesNotMatch(ins[user]!.args, /^(root|0)(:|$)/, 'build runs as a non-root user');
    idx((i) => i.op === 'ENV' && /\bnpm_config_nodedir=\/usr\/local\b/.test(i.args), 'npm_config_nodedir');
    const ci = idx(
      (i) => i.op === 'RUN' && /\bnpm ci\b(?!.*--omit=dev)/.test(i.args),
      'npm ci (with dev dependencies)',
    );
    assert.equal(ins.filter((i) => /\bnpm ci\b/.test(i.args)).length, 1, 're2 compiles once');
    const prod = idx(
      (i) => i.op === 'RUN' && /\bnpm prune --omit=dev\b/.test(i.args),
      'npm prune --omit=dev',
    );
    assert.match(ins[prod]!.args, /npm pkg delete 'dependencies\.@kubernetes\/client-node'/);
    assert.match(ins[prod]!.args, /strip" --strip-unneeded node_modules\/re2\/build\/Release\/re2\.node/);
    // A cross build swaps koffi's prebuilt addon for the target's and compiles re2 with its compiler.
    assert.match(ins[prod]!.args, /npm install --omit=dev --cpu="\$TARGETARCH" --os=linux --ignore-scripts/);
    assert.match(ins[prod]!.args, /CXX="\$\{cross\}g\+\+" .*node-gyp\.js rebuild --arch="\$TARGETARCH"/);
    const buildStep = idx((i) => i.op === 'RUN' && /\bnpm run build\b/.test(i.args), 'npm run build');
    assert.ok(user < ci && ci < prod && ci < buildStep, 'USER, then npm ci, then the prune and the build');
  });

  test('runtime stage: production files only, tini as PID 1 in exec form, non-root default user, no HEALTHCHECK', () => {
    const ins = runtime!.instructions;
    assert.ok(
      !ins.some((i) => i.op === 'HEALTHCHECK') && !/^HEALTHCHECK/im.test(dockerfile),
      'no HEALTHCHECK',
    );
    const entry = ins.filter((i) => i.op === 'ENTRYPOINT');
    assert.equal(entry.length, 1);
    // --disable-sigusr1: no V8 inspector on the node's loopback (test/integration/inspector-signal.test.ts).
    assert.deepEqual(JSON.parse(entry[0]!.args), [
      '/usr/bin/tini',
      '--',
      'node',
      '--disable-sigusr1',
      '/app/dist/main.js',
    ]);
    assert.ok(!ins.some((i) => i.op === 'CMD'), 'no CMD: the DaemonSet passes args');
    const apt = rootfs!.instructions.find((i) => i.op === 'RUN' && i.args.includes('apt-get install'));
    assert.match(apt?.args ?? '', /\stini(\s|$)/);
    assert.match(apt?.args ?? '', /\slibsystemd-shared(\s|$)/, 'the library journalctl links');
    assert.match(
      apt?.args ?? '',
      /install -m 0755 .+ \/usr\/bin\/journalctl/,
      'journalctl for the journald monitors',
    );
    const pick = rootfs!.instructions.find((i) => i.op === 'RUN' && i.args.includes('ldd'));
    assert.match(
      pick?.args ?? '',
      /cp \/usr\/share\/zoneinfo\/Etc\/UTC \$r\/etc\/localtime/,
      '/etc/localtime is a file the host one can be mounted over',
    );
    for (const bin of ['/usr/local/bin/node', '/usr/bin/journalctl', '/usr/bin/tini', '/usr/bin/dash'])
      assert.ok(pick?.args.includes(bin), `the libraries ${bin} links are picked`);
    assert.deepEqual(
      ins.filter((i) => i.op === 'COPY' && i.args.includes('--from=rootfs')).map((i) => i.args),
      ['--from=rootfs /rootfs/ /'],
    );
    const copies = ins
      .filter((i) => i.op === 'COPY' && !i.args.includes('--from=rootfs'))
      .map((i) =>
        i.args
          .split(' ')
          .filter((a) => !a.startsWith('--'))
          .at(-1),
      );
    assert.deepEqual(copies.sort(), [
      './dist',
      './node_modules',
      './package.json',
      './rules',
      '/usr/local/bin/node',
    ]);
    const workdir = ins.filter((i) => i.op === 'WORKDIR').at(-1);
    assert.equal(workdir?.args, '/app');
    const user = ins.filter((i) => i.op === 'USER').at(-1);
    assert.match(
      user?.args ?? '',
      /^[1-9]\d*(:\d+)?$/,
      'a numeric non-root user, so runAsNonRoot can verify it',
    );
    assert.ok(ins.some((i) => i.op === 'ENV' && /NODE_ENV=production/.test(i.args)));
  });

  test('every file the build copies from the context exists and is not excluded by .dockerignore', () => {
    const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    for (const p of ['node_modules', 'dist', '.git', '.cache', '.tools'])
      assert.ok(ignored(patterns, p), `${p} is excluded`);
    const sources = stages.flatMap((s) =>
      s.instructions
        .filter((i) => i.op === 'COPY' && !i.args.includes('--from='))
        .flatMap((i) =>
          i.args
            .split(' ')
            .filter((a) => !a.startsWith('--'))
            .slice(0, -1),
        ),
    );
    assert.ok(sources.length > 0);
    for (const src of sources) {
      assert.ok(existsSync(join(ROOT, src)), `${src} exists`);
      assert.ok(!ignored(patterns, src), `${src} is not excluded by .dockerignore`);
    }
  });
});
