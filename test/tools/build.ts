/**
 * Builds the shipped runtime: one minified ESM bundle. Bundling cuts idle RSS (fewer modules to
 * compile and keep) and start-up time; native addons and optional dev-only modules stay external.
 * `--kubectl-plugin` builds the kubectl plugin's bundle instead (deploy/krew/package.sh).
 */

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';

const root = join(import.meta.dirname, '..', '..');

/** The commit `--version` names: the image build passes it in (its context has no .git). */
function gitCommit(): string {
  if (process.env.NPD_GIT_COMMIT) return process.env.NPD_GIT_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

/**
 * Node built-ins reach the bundle through require(), not ESM import: Node builds an ES module facade of
 * a built-in by reading every export, which runs its lazy getters. `import 'node:http'` alone thereby
 * loads undici (http.WebSocket), http2, tls, zlib, perf_hooks and worker_threads: 172 internal modules
 * against 110 for require('node:http') (process.moduleLoadList, Node 24).
 */
const builtinsViaRequire: Plugin = {
  name: 'builtins-via-require',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.namespace === 'builtin'
        ? { path: args.path, external: true }
        : { path: args.path, namespace: 'builtin' },
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * V8 keeps a source with any character above Latin-1 as a two-byte string (twice the file's size in
 * the heap); esbuild leaves regular-expression literals as written (`μs` in gocompat/duration.ts).
 * Escaping is valid in every place such a character can stand: strings, templates, regexes, comments.
 */
function escapeNonAscii(file: string): void {
  const text = readFileSync(file, 'utf8');
  // Per UTF-16 unit: an astral character becomes its surrogate pair, which JS reads back as one.
  const escaped = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (escaped !== text) writeFileSync(file, escaped);
}

/** What both bundles share: one minified ESM file for Node 22+, built-ins through require(). */
function bundle(outfile: string, plugins: Plugin[]) {
  return build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    // NPD_BUILD_MINIFY=0 keeps names readable for a CPU profile or a heap snapshot.
    minify: process.env.NPD_BUILD_MINIFY !== '0',
    sourcemap: 'linked',
    legalComments: 'linked',
    external: ['re2', 'koffi', '@kubernetes/client-node'],
    banner: {
      // Bundled CommonJS dependencies call require() for Node built-ins.
      js: "import { createRequire as __npdCreateRequire } from 'node:module'; const require = __npdCreateRequire(import.meta.url);",
    },
    define: {
      __NPD_GIT_COMMIT__: JSON.stringify(gitCommit()),
      __NPD_BUILD_DATE__: JSON.stringify(process.env.NPD_BUILD_DATE || new Date().toISOString()),
    },
    plugins: [...plugins, builtinsViaRequire],
    logLevel: 'warning',
  });
}

/**
 * The kubectl plugin's bundle (deploy/krew/package.sh) runs only `fleet`, on any machine with Node:
 * no native addon beside it. re2, the one addon imported at load time, becomes a module that refuses
 * to build a pattern, so starting the agent from this bundle fails with that message instead of a
 * missing-module error; koffi and client-node load lazily and are never reached by `fleet`.
 */
const withoutRe2: Plugin = {
  name: 'without-re2',
  setup(b) {
    b.onResolve({ filter: /^re2$/ }, () => ({ path: 're2', namespace: 'without-re2' }));
    b.onLoad({ filter: /.*/, namespace: 'without-re2' }, () => ({
      contents:
        "export default class RE2 { constructor() { throw new Error('this is the kubectl plugin bundle: it runs only the fleet command, not the agent'); } }",
      loader: 'js',
    }));
  },
};

// `--kubectl-plugin` builds only the plugin's bundle (deploy/krew/package.sh), so the image keeps one.
if (process.argv.includes('--kubectl-plugin')) {
  const pluginBundle = join(root, 'dist', 'kubectl-npd', 'node-problem-detector.js');
  await bundle(pluginBundle, [withoutRe2]);
  escapeNonAscii(pluginBundle);
  console.log('built dist/kubectl-npd/node-problem-detector.js');
} else {
  await bundle(join(root, 'dist', 'main.js'), []);
  escapeNonAscii(join(root, 'dist', 'main.js'));
  console.log('built dist/main.js');
}
