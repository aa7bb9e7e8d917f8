import http from 'node:http';
import type * as Https from 'node:https';
import { builtin } from '../core/builtin.ts';
import type { Clock } from '../core/clock.ts';
import { send } from '../kube/http.ts';

export const UPLOAD_TIMEOUT_MS = 60_000;

/** Why an upload failed, in words safe for a status and a log: never the URL, which is a credential. */
export class UploadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UploadError';
  }
}

/** An object store's error code (S3 and GCS answer XML with <Code>), without the rest of the body. */
function errorCode(body: string): string {
  const code = /<Code>([A-Za-z0-9]{1,64})<\/Code>/.exec(body)?.[1];
  return code ? ` (${code})` : '';
}

/**
 * PUTs the bundle to the presigned URL with a deadline covering connect, send and answer. No
 * credentials of ours go along: a presigned URL carries its own authorization.
 */
export async function uploadBundle(
  uploadURL: string,
  body: Buffer,
  clock: Clock,
  timeoutMs = UPLOAD_TIMEOUT_MS,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(uploadURL);
  } catch {
    throw new UploadError('uploadURL is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UploadError(`uploadURL scheme ${url.protocol} is not http or https`);
  const agent =
    url.protocol === 'https:' ? new (builtin<typeof Https>('node:https').Agent)() : new http.Agent();
  const headers = { 'content-type': 'application/gzip', 'content-length': String(body.length) };
  try {
    const res = await send(agent, { method: 'PUT', url, headers, body, timeoutMs }, clock);
    if (res.status < 200 || res.status > 299)
      throw new UploadError(`upload target answered ${res.status}${errorCode(res.body)}`);
  } catch (err) {
    if (err instanceof UploadError) throw err;
    throw new UploadError(`upload failed: ${(err as Error).message}`);
  } finally {
    agent.destroy();
  }
}
