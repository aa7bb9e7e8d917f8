import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiRequest, JsonObject } from '../../../src/kube/client.ts';
import {
  deleteNodeDiagnostic,
  LIST_PAGE_SIZE,
  listNodeDiagnostics,
  MAX_LISTED,
  type NodeDiagnosticsClient,
} from '../../../src/kube/node-diagnostics.ts';

const item = (i: number): JsonObject => ({
  metadata: { name: `r${i}`, uid: `u${i}` },
  spec: { nodeName: 'n1', uploadURL: 'https://x/y' },
  status: { phase: 'Succeeded', completedAt: '2026-01-01T00:00:00Z' },
});

function pagedClient(total: number) {
  const calls: ApiRequest[] = [];
  const client: NodeDiagnosticsClient = {
    request: async (req) => {
      calls.push(req);
      const limit = Number(req.query?.limit ?? total);
      const start = Number(req.query?.continue ?? 0);
      const end = Math.min(total, start + limit);
      const items = Array.from({ length: end - start }, (_, k) => item(start + k));
      return { items, metadata: end < total ? { continue: String(end) } : {} };
    },
  };
  return { client, calls };
}

describe('listNodeDiagnostics', () => {
  it('pages through a long list instead of one unbounded answer', async () => {
    const { client, calls } = pagedClient(2 * LIST_PAGE_SIZE + 17);
    const { items, complete } = await listNodeDiagnostics(client, 'n1');
    assert.equal(complete, true);
    assert.equal(items.length, 2 * LIST_PAGE_SIZE + 17);
    assert.equal(new Set(items.map((i) => i.uid)).size, items.length, 'no item twice');
    assert.equal(calls.length, 3);
    for (const c of calls) {
      assert.equal(c.query?.limit, String(LIST_PAGE_SIZE));
      assert.equal(c.query?.fieldSelector, 'spec.nodeName=n1');
    }
    assert.deepEqual(
      calls.map((c) => c.query?.continue),
      [undefined, String(LIST_PAGE_SIZE), String(2 * LIST_PAGE_SIZE)],
    );
    assert.equal(items[0]?.completedAt, Date.parse('2026-01-01T00:00:00Z'));
  });

  it('stops at MAX_LISTED and says the listing is not complete, instead of failing (issue 38 item 7)', async () => {
    const { client, calls } = pagedClient(MAX_LISTED + 1);
    const { items, complete } = await listNodeDiagnostics(client, 'n1');
    assert.equal(complete, false);
    assert.equal(items.length, MAX_LISTED);
    assert.equal(calls.length, MAX_LISTED / LIST_PAGE_SIZE);
    // Control: exactly MAX_LISTED requests fit; the last page carries no continue token.
    const exact = await listNodeDiagnostics(pagedClient(MAX_LISTED).client, 'n1');
    assert.equal(exact.complete, true);
    assert.equal(exact.items.length, MAX_LISTED);
  });

  it('deletes one request only if it is still the object that was listed (uid precondition)', async () => {
    const calls: ApiRequest[] = [];
    const client = {
      request: async (r: ApiRequest) => {
        calls.push(r);
        return {};
      },
    };
    await deleteNodeDiagnostic(client, 'r1', 'u1');
    assert.equal(calls[0]?.method, 'DELETE');
    assert.match(calls[0]?.path ?? '', /\/nodediagnostics\/r1$/);
    assert.deepEqual(calls[0]?.body, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: 'u1' },
    });
  });
});
