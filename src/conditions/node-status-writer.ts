import type { KubeClient } from '../kube/client.ts';
import type { NodeConditionJson, NodeStatusWriter } from './manager.ts';
import type { PatchExtras } from './ownership.ts';

/**
 * The condition manager's writer for a real cluster: NPD's hand-built strategic-merge body
 * `{"status":{"conditions":[...]}}` on nodes/<name>/status. The response is a full Node, so its UID is
 * handed to `onUid` (NPD caches the UID from this response too).
 */
export class KubeNodeStatusWriter implements NodeStatusWriter {
  private readonly client: Pick<KubeClient, 'patchNodeStatus'>;
  private readonly nodeName: string;
  private readonly onUid: ((uid: string) => void) | undefined;

  constructor(client: Pick<KubeClient, 'patchNodeStatus'>, nodeName: string, onUid?: (uid: string) => void) {
    this.client = client;
    this.nodeName = nodeName;
    this.onUid = onUid;
  }

  /**
   * Stale types are removed with `$patch: delete` entries in the same merge list, and the ownership
   * annotations ride along: nodes/status accepts metadata changes, so no `nodes` patch right is needed.
   */
  async patchConditions(conditions: readonly NodeConditionJson[], extras?: PatchExtras): Promise<void> {
    const deletes = (extras?.deleteTypes ?? []).map((type) => ({ $patch: 'delete', type }));
    const body: Record<string, unknown> = { status: { conditions: [...conditions, ...deletes] } };
    if (extras && Object.keys(extras.annotations).length > 0)
      body.metadata = { annotations: extras.annotations };
    const node = await this.client.patchNodeStatus(this.nodeName, body);
    if (node.uid !== '') this.onUid?.(node.uid);
  }
}
