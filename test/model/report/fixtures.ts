/** Builders for the objects a fleet report is computed from. */
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL } from '../../../src/model/core/keys.js';
import { manifestWorkName } from '../../../src/model/core/names.js';
import type { ApplicationSet, PlacementDecision } from '../../../src/model/report/report.js';
import type { Application, Condition, FieldValue, ManifestWork } from '../../../src/model/core/types.js';
import { placementApplicationSet, placementDecision } from '../../support/appsets.js';

export const NS = 'argocd';
export const APPSET = 'guestbook';
export const APPSET_UID = 'appset-uid-1';
export const PLACEMENT = 'prod';

export function applicationSet(
  options: { name?: string; placement?: string; pull?: boolean; deleting?: boolean; generation?: number } = {},
): ApplicationSet {
  const name = options.name ?? APPSET;
  return placementApplicationSet({
    name,
    namespace: NS,
    placement: options.placement ?? PLACEMENT,
    metadata: {
      uid: `${name}-uid`,
      generation: options.generation ?? 1,
      ...(options.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    requeueAfterSeconds: 180,
    template: {
      metadata: {
        name: `{{name}}-${name}`,
        labels: options.pull === false ? {} : { [PULL_LABEL]: 'true' },
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: '{{name}}' },
      },
      spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: name } },
    },
  });
}

export function decision(
  name: string,
  clusters: readonly string[],
  placement = PLACEMENT,
  namespace = NS,
): PlacementDecision {
  return placementDecision(placement, clusters, { name, namespace });
}

/** The hub Application the ApplicationSet generates for `cluster`. */
export function hubApp(cluster: string, appSet = APPSET): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: `${cluster}-${appSet}`,
      namespace: NS,
      uid: `${cluster}-app-uid`,
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: cluster },
      ownerReferences: [
        {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'ApplicationSet',
          name: appSet,
          uid: `${appSet}-uid`,
          controller: true,
        },
      ],
    },
    spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: appSet } },
  };
}

/**
 * The hub Application the applicationset-controller generates for `cluster`, as the live API holds it:
 * pull label, cluster annotation, skip-reconcile, owned by the ApplicationSet with uid `appSetUid`.
 */
export function generatedHubApp(cluster: string, appSetUid: string, appSet = APPSET): Application {
  const { uid: _serverAssigned, ...metadata } = hubApp(cluster, appSet).metadata;
  return {
    ...hubApp(cluster, appSet),
    metadata: {
      ...metadata,
      annotations: { ...metadata.annotations, 'argocd.argoproj.io/skip-reconcile': 'true' },
      ownerReferences: metadata.ownerReferences!.map((ref) => ({ ...ref, uid: appSetUid })),
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: appSet },
      source: { repoURL: 'https://git.example/apps', path: appSet },
    },
  };
}

export interface Feedback {
  health?: string;
  sync?: string;
  revision?: string;
  phase?: string;
  startedAt?: string;
  message?: string;
  reconciledAt?: string;
}

/** The report tests' clock: one hour into 2026. */
export const NOW = new Date('2026-01-01T01:00:00Z');

/** The feedback of an app that is synced and healthy, reconciled a minute before {@link NOW}. */
export const healthy: Feedback = {
  health: 'Healthy',
  sync: 'Synced',
  revision: 'abc123',
  reconciledAt: '2026-01-01T00:59:00Z',
};

/** The work delivering `cluster`'s app, with the given feedback and work conditions. */
export function work(
  cluster: string,
  feedback: Feedback | undefined,
  options: {
    applied?: Condition['status'];
    available?: Condition['status'];
    created?: string;
    appSet?: string;
    extraConditions?: Condition[];
  } = {},
): ManifestWork {
  const appName = `${cluster}-${options.appSet ?? APPSET}`;
  const values: Array<{ name: string; fieldValue: FieldValue }> = [];
  const put = (name: string, value: string | undefined): void => {
    if (value !== undefined) values.push({ name, fieldValue: { type: 'String', string: value } });
  };
  if (feedback) {
    put('healthStatus', feedback.health);
    put('syncStatus', feedback.sync);
    put('syncRevision', feedback.revision);
    put('operationStatePhase', feedback.phase);
    put('operationStateStartedAt', feedback.startedAt);
    put('operationStateMessage', feedback.message);
    put('reconciledAt', feedback.reconciledAt);
  }
  const conditions: Condition[] = [];
  if (options.applied !== undefined)
    conditions.push({
      type: 'Applied',
      status: options.applied,
      reason: 'AppliedManifestWorkFailed',
      message: 'Failed to apply manifest: forbidden',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
  if (options.available !== undefined)
    conditions.push({
      type: 'Available',
      status: options.available,
      reason: 'ResourcesAvailable',
      message: 'All resources are available',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
  conditions.push(...(options.extraConditions ?? []));
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: {
      name: manifestWorkName(NS, appName),
      namespace: cluster,
      creationTimestamp: options.created ?? '2026-01-01T00:00:00Z',
    },
    spec: { workload: { manifests: [] } },
    status: {
      conditions,
      resourceStatus: {
        manifests: [
          {
            resourceMeta: {
              group: 'argoproj.io',
              version: 'v1alpha1',
              kind: 'Application',
              resource: 'applications',
              name: appName,
              namespace: NS,
              ordinal: 0,
            },
            conditions: [],
            ...(values.length ? { statusFeedback: { values } } : {}),
          },
        ],
      },
    },
  };
}
