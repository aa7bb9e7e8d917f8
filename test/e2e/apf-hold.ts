/**
 * Keeps an APF priority level's seats busy, so that every other request of the level is rejected:
 * APF dispatches a request whenever none of its level is executing, even at zero seats, so a level
 * cut to zero seats alone rejects nothing on a quiet server. A validating webhook on 127.0.0.1 holds
 * each Event creation in one namespace for `holdMs`; requests the level classifies, sent back to back,
 * then occupy it without gaps. The request executes (and keeps its seat) while the webhook answers.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { join } from 'node:path';
import type { ControlPlane } from './harness/controlplane.ts';

export const HOLD_NAMESPACE = 'npd-apf-hold';

export interface Hold {
  /** Starts `n` senders that create Events in HOLD_NAMESPACE with `token`, staggered over holdMs. */
  start(n: number): void;
  stop(): Promise<void>;
}

export async function holdWebhook(
  cp: ControlPlane,
  dir: string,
  token: string,
  holdMs: number,
): Promise<Hold> {
  const [key, cert] = [join(dir, 'hold.key'), join(dir, 'hold.crt')];
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
    ],
    { stdio: 'ignore' },
  );
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(body).toString()) as { request: { uid: string } };
      setTimeout(() => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ ...review, response: { uid: review.request.uid, allowed: true } }));
      }, holdMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await cp.request('POST', '/api/v1/namespaces', { body: { metadata: { name: HOLD_NAMESPACE } } });
  await cp.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    body: webhookConfig(port, readFileSync(cert).toString('base64'), holdMs),
  });
  let running = true;
  const senders: Promise<void>[] = [];
  const send = async (delayMs: number) => {
    await new Promise((r) => setTimeout(r, delayMs));
    while (running) {
      const involvedObject = { kind: 'Pod', name: 'hold', namespace: HOLD_NAMESPACE };
      const event = { metadata: { generateName: 'hold-' }, involvedObject };
      const r = await cp.request('POST', `/api/v1/namespaces/${HOLD_NAMESPACE}/events`, {
        body: { ...event, reason: 'Hold', message: 'hold', type: 'Normal' },
        token,
        timeoutMs: holdMs + 15_000,
      });
      // Rejected while another sender holds the seat: try again soon, to take it when that one ends.
      if (r.status === 429) await new Promise((res) => setTimeout(res, 20));
    }
  };
  return {
    start(n: number) {
      // Staggered, so one sender's request is executing whenever another's ends.
      for (let i = 0; i < n; i++) senders.push(send((i * holdMs) / n));
    },
    async stop() {
      running = false;
      await Promise.all(senders);
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function webhookConfig(port: number, caBundle: string, holdMs: number): unknown {
  return {
    metadata: { name: 'npd-apf-hold' },
    webhooks: [
      {
        name: 'hold.npd-e2e.example.com',
        clientConfig: { url: `https://127.0.0.1:${port}/hold`, caBundle },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['events'] }],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': HOLD_NAMESPACE } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Ignore',
        timeoutSeconds: Math.ceil(holdMs / 1000) + 5,
      },
    ],
  };
}
