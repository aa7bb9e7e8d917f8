/** The pieces of the diagnostics e2e test: an upload target on 127.0.0.1 and bundle unpacking. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export interface Upload {
  readonly method: string;
  readonly path: string;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: Buffer;
}

/** Answers PUTs under /ok/ with 200 and under /fail/ with 500 (an S3-style XML error); keeps them all. */
export interface UploadTarget {
  readonly base: string;
  readonly uploads: Upload[];
  close(): Promise<void>;
}

export async function uploadTarget(): Promise<UploadTarget> {
  const uploads: Upload[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      uploads.push({
        method: req.method ?? '',
        path,
        contentType: req.headers['content-type'],
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks),
      });
      if (path.startsWith('/fail/')) {
        res.writeHead(500, { 'content-type': 'application/xml' });
        res.end(
          '<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>',
        );
      } else {
        res.writeHead(200).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    base: `http://127.0.0.1:${port}`,
    uploads,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Unpacks a tar.gz with the real tar and returns every file's content by relative path. */
export function unpack(body: Buffer): Map<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'npd-e2e-bundle-'));
  const archive = join(dir, 'bundle.tar.gz');
  writeFileSync(archive, body);
  const out = join(dir, 'out');
  execFileSync('mkdir', ['-p', out]);
  execFileSync('tar', ['-xzf', archive, '-C', out]);
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.set(relative(out, p), readFileSync(p, 'utf8'));
    }
  };
  walk(out);
  return files;
}

export interface ManifestJson {
  request: string;
  node: string;
  maxBytes: number;
  contentBytes: number;
  parts: { name: string; status: string; bytes: number; note?: string }[];
}

/** A request; `upload` is a plain URL, or `{ sealed }` for spec.sealedUploadURL. */
export function nodeDiagnosticYaml(
  name: string,
  nodeName: string,
  upload: string | { readonly sealed: string },
  extra = '',
): string {
  const field = typeof upload === 'string' ? `uploadURL: '${upload}'` : `sealedUploadURL: '${upload.sealed}'`;
  return [
    'apiVersion: node-problem-detector.io/v1alpha1',
    'kind: NodeDiagnostic',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  nodeName: ${nodeName}`,
    `  ${field}`,
    ...(extra ? [extra] : []),
    '',
  ].join('\n');
}
