/**
 * Builds the shipped runtime: one minified ESM bundle. Bundling cuts idle RSS (fewer modules to
 * compile and keep) and start-up time; native addons and optional dev-only modules stay external.
 */

import { join } from 'node:path';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..', '..');

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
  logLevel: 'warning',
});
console.log('built dist/main.js');
