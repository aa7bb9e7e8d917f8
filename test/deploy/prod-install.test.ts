// Production-install smoke test: repeats the image's steps (Dockerfile) in a temp dir, since no container
// engine runs here. The build context (git ls-files: tracked and untracked, not ignored) is copied,
// `npm ci --omit=dev` installs the production dependencies (the build stage's last step), the repo's
// built dist/ stands in for the build stage's `npm run build`, and the runtime stage's COPY lines
// assemble /app. Then the image's ENTRYPOINT runs: --version, and a short standalone run whose /metrics
// must hold problem_counter. One npm install; it takes a while when native addons compile.
//   node --import tsx --test test/deploy/prod-install.test.ts
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, waitFor } from '../support/agent-process.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

function hasGit(): boolean {
  try {
    execFileSync('git', ['-C', ROOT, 'rev-parse', '--git-dir'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

/** Runtime-stage facts read from the Dockerfile, so the test follows it. */
function runtimeStage(): {
  workdir: string;
  env: Record<string, string>;
  entrypoint: string[];
  copies: { from: 'build' | 'context'; src: string; dest: string }[];
} {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const start = lines.findLastIndex((l) => /^FROM\s/i.test(l));
  const stage = lines.slice(start + 1);
  const workdir =
    stage
      .filter((l) => /^WORKDIR\s/i.test(l))
      .at(-1)
      ?.split(/\s+/)[1] ?? '/';
  const env: Record<string, string> = {};
  for (const l of stage.filter((x) => /^ENV\s/i.test(x))) {
    for (const kv of l.slice(4).trim().split(/\s+/)) {
      const [k, v] = kv.split('=');
      if (k && v !== undefined) env[k] = v;
    }
  }
  const entry = stage.find((l) => /^ENTRYPOINT\s/i.test(l));
  assert.ok(entry, 'runtime ENTRYPOINT');
  const entrypoint = JSON.parse(entry.slice('ENTRYPOINT'.length).trim()) as string[];
  const copies = stage
    .filter((l) => /^COPY\s/i.test(l))
    .map((l) => {
      const parts = l.split(/\s+/).slice(1);
      const from = parts.some((p) => p.startsWith('--from=')) ? ('build' as const) : ('context' as const);
      const paths = parts.filter((p) => !p.startsWith('--'));
      return { from, src: paths[0]!, dest: paths[1]! };
    });
  return { workdir, env, entrypoint, copies };
}

const skip = hasGit() ? false : 'not a git checkout (git ls-files gives the build context)';

describe('production install, as the image does it', { skip }, () => {
  const nodeBin = dirname(process.execPath);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${nodeBin}${delimiter}${process.env.PATH ?? ''}`,
    // Native addons compile against this Node's headers, without downloading any.
    npm_config_nodedir: dirname(nodeBin),
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    NODE_OPTIONS: '',
  };
  let tmp: string;
  let context: string;
  let app: string;
  let stage: ReturnType<typeof runtimeStage>;

  before(
    () => {
      stage = runtimeStage();
      if (!existsSync(join(ROOT, 'dist/main.js'))) {
        execFileSync('npm', ['run', 'build'], { cwd: ROOT, env, stdio: 'pipe' });
      }
      tmp = mkdtempSync(join(tmpdir(), 'npd-prod-'));
      context = join(tmp, 'build');
      app = join(tmp, 'app');
      const files = execFileSync(
        'git',
        ['-C', ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
        {
          encoding: 'utf8',
          maxBuffer: 64 * 1024 * 1024,
        },
      )
        .split('\0')
        .filter((f) => f !== '' && existsSync(join(ROOT, f)));
      for (const f of files) {
        mkdirSync(dirname(join(context, f)), { recursive: true });
        cpSync(join(ROOT, f), join(context, f));
      }
      // The build stage's last step.
      execFileSync('npm', ['ci', '--omit=dev'], { cwd: context, env, stdio: 'pipe', timeout: 20 * 60_000 });
      // The build stage's `npm run build`, done once in the repository.
      cpSync(join(ROOT, 'dist'), join(context, 'dist'), { recursive: true });
      // The runtime stage's COPY lines; the build stage's WORKDIR is /build.
      for (const c of stage.copies) {
        const src =
          c.from === 'build' ? join(context, c.src.replace(/^\/build\/?/, '')) : join(context, c.src);
        cpSync(src, join(app, c.dest), { recursive: true });
      }
    },
    { timeout: 30 * 60_000 },
  );

  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** The image's ENTRYPOINT with /app mapped to the temp dir; tini only when this host has it. */
  const entrypoint = (): string[] => {
    let argv = stage.entrypoint.map((a) => a.replace(/^\/app(?=\/|$)/, app));
    if (argv[0] === '/usr/bin/tini' && !existsSync('/usr/bin/tini'))
      argv = argv.slice(argv.indexOf('--') + 1);
    return argv.map((a) => (a === 'node' ? process.execPath : a));
  };
  const runtimeEnv = (): NodeJS.ProcessEnv => ({ ...env, ...stage.env });

  test('/app holds only package.json, production node_modules, dist and rules', () => {
    assert.equal(stage.workdir, '/app');
    assert.deepEqual(readdirSync(app).sort(), ['dist', 'node_modules', 'package.json', 'rules']);
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies))
      assert.ok(existsSync(join(app, 'node_modules', dep, 'package.json')), `${dep} installed`);
    // Packages the lockfile marks dev-only. A devDependency can also be a dependency of a production
    // package (e.g. @types/node of @kubernetes/client-node) and then rightly stays.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([p, v]) => v.dev === true && p.startsWith('node_modules/'))
      .map(([p]) => p);
    assert.ok(devOnly.length > 0, 'the lockfile marks dev-only packages');
    for (const p of devOnly) assert.ok(!existsSync(join(app, p)), `dev-only ${p} absent`);
    assert.deepEqual(readdirSync(join(app, 'rules')).sort(), readdirSync(join(ROOT, 'rules')).sort());
  });

  test('the bundle external modules load from the production node_modules', () => {
    const bundle = readFileSync(join(app, 'dist/main.js'), 'utf8');
    const externals = new Set(
      [...bundle.matchAll(/(?:import\(|from\s*)"([^".][^"]*)"/g)]
        .map((m) => m[1]!)
        .filter((s) => !s.startsWith('node:')),
    );
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // Externals that are not dependencies (pino-pretty: dev-only pretty logs) must be optional at runtime.
    const needed = [...externals].filter((s) => Object.hasOwn(pkg.dependencies, s));
    assert.ok(needed.length > 0, `externals: ${[...externals].join(', ')}`);
    const code = `for (const m of ${JSON.stringify(needed)}) await import(m); process.stdout.write('ok')`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], {
      cwd: join(app, 'dist'),
      env: runtimeEnv(),
      encoding: 'utf8',
    });
    assert.equal(out, 'ok');
  });

  test('ENTRYPOINT --version prints the package version', () => {
    const [cmd, ...rest] = entrypoint();
    const out = execFileSync(cmd!, [...rest, '--version'], { cwd: app, env: runtimeEnv(), encoding: 'utf8' });
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    assert.equal(out.trim(), `node-problem-detector ${version}`);
  });

  test('a standalone run with the image defaults serves /metrics with problem_counter', {
    timeout: 60_000,
  }, async () => {
    const [port, promPort] = [await freePort(), await freePort()];
    const [cmd, ...rest] = entrypoint();
    const child = spawn(
      cmd!,
      [...rest, '--enable-k8s-exporter=false', `--port=${port}`, `--prometheus-port=${promPort}`],
      {
        cwd: app,
        env: runtimeEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      let metrics = '';
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}`);
          const res = await fetch(`http://127.0.0.1:${promPort}/metrics`);
          metrics = await res.text();
          return res.ok && metrics.includes('problem_counter');
        },
        30_000,
        () => out,
      );
      assert.match(metrics, /^# TYPE problem_counter counter$/m);
      assert.match(
        metrics,
        /^problem_counter\{reason="OOMKilling"\} 0$/m,
        'the image default rules (rules/kernel.yaml) are loaded',
      );
      const conditions = await (await fetch(`http://127.0.0.1:${port}/conditions`)).json();
      assert.ok(Array.isArray(conditions));
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0, `clean exit on SIGTERM:\n${out.slice(-2000)}`);
    }
  });
});
