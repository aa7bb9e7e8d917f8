import type { NodeConditionJson, NodeStatusWriter } from '../conditions/manager.ts';
import type { KubeClient } from './client.ts';

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

  async patchConditions(conditions: readonly NodeConditionJson[]): Promise<void> {
    const node = await this.client.patchNodeStatus(this.nodeName, { status: { conditions } });
    if (node.uid !== '') this.onUid?.(node.uid);
  }
}
