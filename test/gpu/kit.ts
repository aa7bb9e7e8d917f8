/**
 * Builds the test:gpu kit in .cache/gpu-kit: what `npm run test:gpu` needs on a machine where the
 * repository was copied without node_modules (a GPU machine with Node 24 and nothing else):
 *   main.js        the agent's bundle, as `npm run build` makes it (dist/main.js)
 *   gpu-probe.mjs  probe.ts bundled: every NVML check's answer per GPU, through the agent's own binding
 *   node_modules/  the native addons both bundles leave external: koffi (its linux-x64 build) and re2
 *                  (its addon without debug symbols: 23 MiB become about 3)
 *   node.xz        with --with-node only: this Node binary, xz-compressed (about 30 MiB), for a GPU machine
 *                  without Node 24; device.sh unpacks it with Python's lzma. Kept when the kit is rebuilt.
 * About 7 MiB without node.xz. Run by run.ts wherever node_modules is present, so the kit is always the
 * checked-out code; on the GPU machine run.ts uses the kit it was given (the device tool's
 * `carry: [".cache/gpu-kit"]`).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { REPO } from '../support/agent-process.ts';
import { KIT } from './paths.ts';

function copyModules(): void {
  const from = join(REPO, 'node_modules');
  const to = join(KIT, 'node_modules');
  cpSync(join(from, 'koffi'), join(to, 'koffi'), { recursive: true });
  cpSync(
    join(from, '@koromix', 'koffi-linux-x64', 'linux_x64'),
    join(to, '@koromix', 'koffi-linux-x64', 'linux_x64'),
    {
      recursive: true,
    },
  );
  for (const f of ['package.json', 'index.js'])
    copyFileSync(join(from, '@koromix', 'koffi-linux-x64', f), join(to, '@koromix', 'koffi-linux-x64', f));
  mkdirSync(join(to, 're2', 'build', 'Release'), { recursive: true });
  for (const f of ['package.json', 're2.js']) copyFileSync(join(from, 're2', f), join(to, 're2', f));
  cpSync(join(from, 're2', 'lib'), join(to, 're2', 'lib'), { recursive: true });
  const addon = join(from, 're2', 'build', 'Release', 're2.node');
  const target = join(to, 're2', 'build', 'Release', 're2.node');
  try {
    execFileSync('strip', ['--strip-debug', '-o', target, addon], { stdio: 'ignore' });
  } catch {
    copyFileSync(addon, target); // no strip here: the full addon (23 MiB) still fits the 64 MiB carry
  }
}

/** probe.ts as one ESM file; koffi stays external, loaded from the kit's node_modules. */
async function bundleProbe(): Promise<void> {
  await build({
    entryPoints: [join(import.meta.dirname, 'probe.ts')],
    outfile: join(KIT, 'gpu-probe.mjs'),
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    external: ['koffi', 're2'],
    banner: {
      js: "import { createRequire as __kitRequire } from 'node:module'; const require = __kitRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}

/** This node, xz-compressed with one thread (about 40 s of CPU): Python's lzma can unpack it anywhere. */
function packNode(): void {
  execFileSync('sh', ['-c', 'xz -6 -T1 -c "$0" > "$1"', process.execPath, join(KIT, 'node.xz')]);
}

export async function buildKit(withNode: boolean): Promise<void> {
  rmSync(join(KIT, 'node_modules'), { recursive: true, force: true });
  mkdirSync(KIT, { recursive: true });
  execFileSync(process.execPath, ['--import', 'tsx', join(REPO, 'test', 'tools', 'build.ts')], {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  copyFileSync(join(REPO, 'dist', 'main.js'), join(KIT, 'main.js'));
  await bundleProbe();
  copyModules();
  if (!existsSync(join(KIT, 'gpu-probe.mjs'))) throw new Error(`${KIT}/gpu-probe.mjs was not built`);
  if (withNode) packNode();
}

if (import.meta.main) await buildKit(process.argv.includes('--with-node'));
