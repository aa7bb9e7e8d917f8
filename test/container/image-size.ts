// The size of a locally built image as a registry would store it: skopeo copies it from podman's
// storage into an OCI layout with gzip-compressed layers, whose manifest lists each layer's compressed
// size; the config's history names the Dockerfile step that made it.
//   node --import tsx test/container/image-size.ts [tag]     prints the layer table and the totals
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Layer {
  readonly step: string;
  readonly bytes: number;
  readonly gzipBytes: number;
}

export interface ImageSize {
  readonly layers: Layer[];
  readonly bytes: number;
  readonly gzipBytes: number;
}

interface Descriptor {
  digest: string;
  size: number;
}

const MiB = 1024 * 1024;

function blob(dir: string, digest: string): Buffer {
  return readFileSync(join(dir, 'blobs', ...digest.split(':')));
}

/** The Dockerfile step of each non-empty history entry, shortened the way `podman history` does. */
function steps(config: { history?: { created_by?: string; empty_layer?: boolean }[] }): string[] {
  return (config.history ?? [])
    .filter((h) => !h.empty_layer)
    .map((h) =>
      (h.created_by ?? '')
        .replace(/^\/bin\/sh -c #\(nop\)\s*/, '')
        .replace(/^\/bin\/sh -c /, 'RUN ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
}

export function imageSize(tag: string): ImageSize {
  const dir = mkdtempSync(join(tmpdir(), 'npd-image-size-'));
  try {
    execFileSync(
      'skopeo',
      ['copy', '--quiet', '--dest-compress-format', 'gzip', `containers-storage:${tag}`, `oci:${dir}:x`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
    const manifest = JSON.parse(blob(dir, index.manifests[0]!.digest).toString()) as {
      config: Descriptor;
      layers: Descriptor[];
    };
    const config = JSON.parse(blob(dir, manifest.config.digest).toString());
    const inspect = JSON.parse(execFileSync('podman', ['image', 'inspect', tag], { encoding: 'utf8' })) as {
      Size: number;
    }[];
    const history = steps(config);
    const layers = manifest.layers.map((l, i) => {
      const gunzipped = execFileSync('sh', ['-c', 'gzip -dc | wc -c'], { input: blob(dir, l.digest) });
      return { step: history[i] ?? '?', bytes: Number(gunzipped.toString().trim()), gzipBytes: l.size };
    });
    const gzipBytes = layers.reduce((n, l) => n + l.gzipBytes, 0);
    return { layers, bytes: inspect[0]!.Size, gzipBytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mib = (n: number): string => (n / MiB).toFixed(1).padStart(6);

/** A markdown table of the layers (the one docs/install.md shows). */
export function formatSize(tag: string, size: ImageSize): string {
  const rows = size.layers.map(
    (l) => `| ${mib(l.bytes)} | ${mib(l.gzipBytes)} | \`${l.step.slice(0, 90).replaceAll('|', '\\|')}\` |`,
  );
  return [
    `image ${tag}: ${(size.bytes / MiB).toFixed(1)} MiB uncompressed, ${(size.gzipBytes / MiB).toFixed(1)} MiB gzip`,
    '| MiB | MiB gzip | layer |',
    '|---:|---:|---|',
    ...rows,
  ].join('\n');
}

if (import.meta.main) {
  const tag = process.argv[2] ?? 'localhost/node-problem-detector:ci';
  console.log(formatSize(tag, imageSize(tag)));
}
