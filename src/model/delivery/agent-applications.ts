/**
 * The Applications of the advanced model (argocd-agent): the hub Application an agent-managed spoke gets
 * and the one an agent-autonomous spoke runs from its own folder. Both take their spec from the app
 * definition exactly as the basic model's hub Application does.
 */
import {
  ARGOCD_API_VERSION,
  ARGOCD_RESOURCES_FINALIZER,
  CONSTRUCT_PATH_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  SOURCE_UID_MISMATCH_POLICY_ANNOTATION,
  SOURCE_UID_MISMATCH_UPSERT,
} from '../core/keys.js';
import { sortKeys } from '../core/records.js';
import type { Application } from '../core/types.js';
import { DELIVERY_MODEL_LABEL, DeliveryModel } from './delivery-model.js';
import { applicationSpec, FLEET_APP_LABEL, staticHubApplicationName, type AppDefinition } from './hub-application.js';

function modelLabels(def: AppDefinition, model: DeliveryModel): Record<string, string> {
  return sortKeys({
    ...(def.labels ?? {}),
    [FLEET_APP_LABEL]: def.name,
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [DELIVERY_MODEL_LABEL]: model,
  });
}

/**
 * The hub Application of an agent-managed spoke: routed to the agent by `destination.name`, no pull
 * label, no skip-reconcile (the principal owns it), named like the basic hub app (`<app>-<cluster>`) so
 * a move between models keeps one name.
 */
export function buildAgentManagedHubApplication(
  def: AppDefinition,
  target: { cluster: string; namespace: string; constructPath: string },
): Application {
  const spec = applicationSpec(def);
  spec.destination = { name: target.cluster, namespace: def.destinationNamespace };
  const app: Application = {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata: {
      name: staticHubApplicationName(def.name, target.cluster),
      namespace: target.namespace,
      labels: modelLabels(def, DeliveryModel.AGENT_MANAGED),
      // The agent reads this from the incoming Application: a spoke copy with another source UID (this hub
      // Application deleted and created again) is updated in place, never deleted (and pruned) and recreated.
      annotations: sortKeys({
        ...(def.annotations ?? {}),
        [CONSTRUCT_PATH_ANNOTATION]: target.constructPath,
        [SOURCE_UID_MISMATCH_POLICY_ANNOTATION]: SOURCE_UID_MISMATCH_UPSERT,
      }),
    },
    spec: spec as unknown as Application['spec'],
  };
  if (def.pruneOnDelete) app.metadata.finalizers = [ARGOCD_RESOURCES_FINALIZER];
  return app;
}

/**
 * The Application an agent-autonomous spoke runs from its own folder: deploys in-cluster, named like
 * the payload of the basic model (`<app>-<cluster>` for static apps, `<cluster>-<app>` for
 * ApplicationSets) so a move between models adopts the same object.
 */
export function buildAutonomousSpokeApplication(
  def: AppDefinition,
  target: { cluster: string; namespace: string; constructPath: string; name?: string },
): Application {
  const app: Application = {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata: {
      name: target.name ?? staticHubApplicationName(def.name, target.cluster),
      namespace: target.namespace,
      labels: modelLabels(def, DeliveryModel.AGENT_AUTONOMOUS),
      annotations: sortKeys({ ...(def.annotations ?? {}), [CONSTRUCT_PATH_ANNOTATION]: target.constructPath }),
    },
    spec: applicationSpec(def) as unknown as Application['spec'],
  };
  if (def.pruneOnDelete) app.metadata.finalizers = [ARGOCD_RESOURCES_FINALIZER];
  return app;
}
