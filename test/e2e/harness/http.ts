/**
 * Raw HTTPS requests to kube-apiserver, bypassing kubectl so tests can see exact status codes and
 * bodies. The apiserver's certificate is self-signed, so it is not verified (loopback only).
 */
import * as https from 'node:https';
import type { HttpResult, RequestOptions } from './types.ts';

const insecureAgent = new https.Agent({ keepAlive: false, rejectUnauthorized: false });

export function httpsRequest(url: string, method: string, opts: RequestOptions = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['Content-Type'] =
        opts.contentType ??
        (method === 'PATCH' ? 'application/strategic-merge-patch+json' : 'application/json');
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const req = https.request(
      url,
      { method, headers, agent: insecureAgent, timeout: opts.timeoutMs ?? 15_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if ((res.headers['content-type'] ?? '').includes('json')) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, text, json, headers: res.headers });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
