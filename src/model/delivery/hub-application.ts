/**
 * Hub Applications rendered at synth time for static pull delivery. The ManifestWork for each one is
 * built from this very object by {@link buildManifestWork}, exactly as the controller would.
 */
import {
  AGENT_SPOKE_DESTINATION,
  ARGOCD_API_VERSION,
  ARGOCD_RESOURCES_FINALIZER,
  ARGOCD_RESOURCES_FINALIZERS,
  CONSTRUCT_PATH_ANNOTATION,
  DELIVERY_ANNOTATION,
  DELIVERY_STATIC,
  DESTINATION_NAME_ANNOTATION,
  IN_CLUSTER_SERVER,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  STAND_BY_ANNOTATION,
} from '../core/keys.js';
import { DELIVERY_MODEL_LABEL, DeliveryModel } from './delivery-model.js';
import { fitName, MAX_LABEL_LENGTH } from '../core/names.js';
import { sortKeys } from '../core/records.js';
import type { Application, JsonObject } from '../core/types.js';

/** Label on hub Applications (and ApplicationSet templates) naming the fleet app they come from. */
export const FLEET_APP_LABEL = 'pullfleet.io/app';

/** What an app delivers, independent of where: the parts of an Application spec pullfleet renders. */
export interface AppDefinition {
  /** The fleet app name (a DNS label). */
  readonly name: string;
  /** The Argo CD AppProject the app's Applications belong to (`spec.project`). */
  readonly project: string;
  /** One source, or several (multi-source Application). */
  readonly sources: readonly JsonObject[];
  /**
   * Render `spec.sources` even for one source (the app was given `sources`, for example one chart and a `ref`
   * source it reads value files from); otherwise one source renders as `spec.source`.
   */
  readonly multiSource?: boolean;
  /** The namespace on the spoke the app deploys into (`spec.destination.namespace`). */
  readonly destinationNamespace: string;
  /**
   * The Applications' `spec.syncPolicy` (automated sync, sync options, retry, managed namespace metadata); absent
   * for manual sync with nothing else set.
   */
  readonly syncPolicy?: JsonObject;
  /** `spec.ignoreDifferences`, in the order given. */
  readonly ignoreDifferences?: readonly JsonObject[];
  /** `spec.info`, in the order given. */
  readonly info?: readonly JsonObject[];
  /** `spec.revisionHistoryLimit`. */
  readonly revisionHistoryLimit?: number;
  /** Delete the app's workload when the Application is deleted (Argo CD resources finalizer). */
  readonly pruneOnDelete?: boolean;
  /** Labels put on every Application rendered for the app, beside pullfleet's own (which win on a clash). */
  readonly labels?: Record<string, string>;
  /**
   * Annotations put on every Application rendered for the app, beside pullfleet's own (which win on a
   * clash); the app's `annotations` prop, without the keys pullfleet, OCM or Argo CD reserve.
   */
  readonly annotations?: Record<string, string>;
}

/** The Application spec shared by static hub apps and ApplicationSet templates. */
export function applicationSpec(def: AppDefinition): JsonObject {
  const spec: JsonObject = { project: def.project };
  if (def.sources.length === 1 && !def.multiSource) spec.source = def.sources[0];
  else spec.sources = [...def.sources];
  spec.destination = { server: IN_CLUSTER_SERVER, namespace: def.destinationNamespace };
  if (def.syncPolicy) spec.syncPolicy = def.syncPolicy;
  if (def.ignoreDifferences?.length) spec.ignoreDifferences = [...def.ignoreDifferences];
  if (def.info?.length) spec.info = [...def.info];
  if (def.revisionHistoryLimit !== undefined) spec.revisionHistoryLimit = def.revisionHistoryLimit;
  return spec;
}

/** Name of the hub Application delivering `app` to `cluster`: `<app>-<cluster>`, fitted to 63 characters. */
export function staticHubApplicationName(app: string, cluster: string): string {
  return fitName(`${app}-${cluster}`, MAX_LABEL_LENGTH);
}

/**
 * The hub Application for static delivery of `def` to `cluster`: pull label, target cluster,
 * `skip-reconcile` (the hub Argo CD only shows it), `pullfleet.io/delivery: static` (the controller
 * leaves its work to synth) and provenance.
 */
export function buildStaticHubApplication(
  def: AppDefinition,
  target: { cluster: string; namespace: string; constructPath: string },
): Application {
  const labels = sortKeys({
    ...(def.labels ?? {}),
    [DELIVERY_MODEL_LABEL]: DeliveryModel.BASIC,
    [FLEET_APP_LABEL]: def.name,
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [PULL_LABEL]: 'true',
  });
  const annotations = sortKeys({
    ...(def.annotations ?? {}),
    [CONSTRUCT_PATH_ANNOTATION]: target.constructPath,
    [DELIVERY_ANNOTATION]: DELIVERY_STATIC,
    [MANAGED_CLUSTER_ANNOTATION]: target.cluster,
    [SKIP_RECONCILE_ANNOTATION]: 'true',
  });
  const app: Application = {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata: {
      name: staticHubApplicationName(def.name, target.cluster),
      namespace: target.namespace,
      labels,
      annotations,
    },
    spec: applicationSpec(def) as unknown as Application['spec'],
  };
  if (def.pruneOnDelete) app.metadata.finalizers = [ARGOCD_RESOURCES_FINALIZER];
  return app;
}

/**
 * The shape a basic hub Application (or ApplicationSet template) takes while a spoke moves between
 * delivery models, in particular while it is taken back from argocd-agent. The principal tells an agent
 * to delete its copy of an Application as soon as the hub Application stops naming the agent in
 * `spec.destination.name` (or is deleted), and the agent deletes it with the finalizers it was created
 * with: with the resources finalizer, the workload goes too.
 */
export interface AgentHandback {
  /**
   * Step 1 of a move: the spoke Application is still someone else's (the agent's, or the spoke folder's
   * Argo CD), or is about to be. The hub Application carries {@link STAND_BY_ANNOTATION}, so its work
   * only creates the spoke Application if it is missing (`CreateOnly`) and orphans it on delete.
   */
  readonly standBy: boolean;
  /**
   * With `standBy`, leaving agent-managed: the agent may still run. The hub Application keeps
   * `destination.name: <cluster>` (the principal keeps it with the agent and sends no delete) and drops
   * `skip-reconcile` (the principal would copy it to the spoke Application and freeze it there).
   */
  readonly route: boolean;
  /**
   * The spoke Application was written by argocd-agent in managed mode (`destination.name: in-cluster`):
   * the work's copy keeps that destination, since a server-side apply cannot remove the agent's field
   * and `name` next to `server` is refused by Argo CD. Stays after the move.
   */
  readonly agentDestination: boolean;
  /**
   * Step 1 of a move to agent-managed: the hub Application (so its work's spoke copy) carries no
   * resources finalizer, so the work agent deletes the spoke Application in step 2 without pruning its
   * workload. The agent cannot take over a spoke Application it did not create: the copy must go first.
   */
  readonly releaseFinalizer?: boolean;
}

/** No hand-back: the normal basic shape. */
export const NO_HANDBACK: AgentHandback = { standBy: false, route: false, agentDestination: false };

/**
 * `app` (a hub Application, or an ApplicationSet template with `cluster` = `'{{name}}'`) in the shape
 * `handback` asks for; the same object when no flag is set.
 */
export function applyAgentHandback<T extends { metadata: { annotations?: Record<string, string> }; spec: unknown }>(
  app: T,
  cluster: string,
  handback: AgentHandback,
): T {
  if (!handback.standBy && !handback.agentDestination && !handback.releaseFinalizer) return app;
  const annotations: Record<string, string> = { ...(app.metadata.annotations ?? {}) };
  if (handback.agentDestination) annotations[DESTINATION_NAME_ANNOTATION] = AGENT_SPOKE_DESTINATION;
  let spec = app.spec;
  if (handback.standBy) annotations[STAND_BY_ANNOTATION] = 'true';
  if (handback.standBy && handback.route) {
    delete annotations[SKIP_RECONCILE_ANNOTATION];
    const current = spec as { destination?: { namespace?: string } };
    spec = {
      ...(spec as object),
      destination: {
        name: cluster,
        ...(current.destination?.namespace ? { namespace: current.destination.namespace } : {}),
      },
    };
  }
  const metadata: T['metadata'] & { finalizers?: string[] } = { ...app.metadata, annotations: sortKeys(annotations) };
  if (handback.releaseFinalizer) {
    const kept = ((app.metadata as { finalizers?: string[] }).finalizers ?? []).filter(
      (f) => !ARGOCD_RESOURCES_FINALIZERS.includes(f),
    );
    if (kept.length) metadata.finalizers = kept;
    else delete metadata.finalizers;
  }
  return { ...app, metadata, spec };
}
