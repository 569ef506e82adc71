/**
 * For tests that vary the hub flavour or the delivery model as data: a GitOpsCluster made with the factory
 * of the hub's flavour, whatever the model. Fleet files pick the factory and the model as literals, which
 * the compiler checks; a test parameterised over both cannot, so it goes through this.
 */
import {
  DeliveryModel,
  GitOpsCluster,
  HubFlavor,
  type Hub,
  type IPlacement,
  type OcmGitOpsClusterProps,
} from '../../src/constructs/index.js';

/** The repository agent-autonomous GitOpsClusters of these tests sync the spoke folders from. */
export const TEST_SPOKE_FOLDER_REPOSITORY = { repoURL: 'https://git.example.com/fleet.git' };

/**
 * A GitOpsCluster `id` of `model` on `placement`, rendered in the hub's flavour (`GitOpsCluster.acm` or
 * `GitOpsCluster.ocm`); agent-autonomous ones sync from {@link TEST_SPOKE_FOLDER_REPOSITORY}.
 */
export function gitOpsClusterOf(hub: Hub, id: string, placement: IPlacement, model: DeliveryModel): GitOpsCluster {
  const props =
    model === DeliveryModel.AGENT_AUTONOMOUS
      ? { placement, model, spokeFolderRepository: TEST_SPOKE_FOLDER_REPOSITORY }
      : { placement, model };
  return hub.flavor === HubFlavor.ACM
    ? GitOpsCluster.acm(hub, id, props)
    : GitOpsCluster.ocm(hub, id, props as OcmGitOpsClusterProps);
}
