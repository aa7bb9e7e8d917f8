/**
 * Builds the shipped runtime: one minified ESM bundle. Bundling cuts idle RSS (fewer modules to
 * compile and keep) and start-up time; native addons and optional dev-only modules stay external.
 */

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { build } from 'esbuild';

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

await build({
  entryPoints: [join(root, 'src', 'main.ts')],
  outfile: join(root, 'dist', 'main.js'),
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  minify: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  external: ['re2', 'koffi', 'pino-pretty', '@kubernetes/client-node'],
  banner: {
    // Bundled CommonJS dependencies call require() for Node built-ins.
    js: "import { createRequire as __npdCreateRequire } from 'node:module'; const require = __npdCreateRequire(import.meta.url);",
  },
  define: {
    __NPD_GIT_COMMIT__: JSON.stringify(gitCommit()),
    __NPD_BUILD_DATE__: JSON.stringify(process.env.NPD_BUILD_DATE || new Date().toISOString()),
  },
  logLevel: 'warning',
});
console.log('built dist/main.js');
