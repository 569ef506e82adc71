/**
 * ApplicationSets and PlacementDecisions for tests, typed by the model (the report's `ApplicationSet` and
 * `PlacementDecision`) and spelled with the model's names (the generator ConfigMap, the placement label), so
 * a test's hub objects read like the ones pullfleet renders and OCM writes.
 */
import {
  ARGOCD_API_VERSION,
  MANAGED_CLUSTER_ANNOTATION,
  PLACEMENT_API_VERSION,
  PLACEMENT_LABEL,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
} from '../../src/model/core/keys.js';
import type { KubeObject } from '../../src/model/core/types.js';
import { PLACEMENT_GENERATOR_CONFIGMAP } from '../../src/model/delivery/appset.js';
import type { ApplicationSet, ApplicationSetGenerator, PlacementDecision } from '../../src/model/report/report.js';
import type { TestCluster } from './cluster.js';

/** How {@link placementDecision} builds a PlacementDecision. */
export interface PlacementDecisionOptions {
  /** @default `${placement}-decision-1` */
  readonly name?: string;
  /** @default 'argocd' */
  readonly namespace?: string;
  /** Whether it carries the placement label (the Placement controller sets it); without it no generator finds it. @default true */
  readonly labelled?: boolean;
}

/** The PlacementDecision the Placement controller writes for Placement `placement`, selecting `clusters`. */
export function placementDecision(
  placement: string,
  clusters: readonly string[],
  options: PlacementDecisionOptions = {},
): PlacementDecision {
  return {
    apiVersion: PLACEMENT_API_VERSION,
    kind: 'PlacementDecision',
    metadata: {
      name: options.name ?? `${placement}-decision-1`,
      namespace: options.namespace ?? 'argocd',
      ...(options.labelled === false ? {} : { labels: { [PLACEMENT_LABEL]: placement } }),
    },
    status: { decisions: clusters.map((clusterName) => ({ clusterName, reason: '' })) },
  };
}

/**
 * Creates `decision` on a real API server as the Placement controller does: the object, then its decisions
 * through the status subresource.
 */
export async function createPlacementDecision(cluster: TestCluster, decision: PlacementDecision): Promise<void> {
  const { status, ...object } = decision;
  const created = await cluster.create(object);
  await cluster.replaceStatus({ ...created, status });
}

/**
 * A clusterDecisionResource generator reading the decisions of Placement `placement` through the generator
 * ConfigMap `configMapRef` (pullfleet's by default; ACM's is `acm-placement`).
 */
export function placementGenerator(
  placement: string,
  requeueAfterSeconds?: number,
  configMapRef: string = PLACEMENT_GENERATOR_CONFIGMAP,
): ApplicationSetGenerator {
  return {
    clusterDecisionResource: {
      configMapRef,
      labelSelector: { matchLabels: { [PLACEMENT_LABEL]: placement } },
      ...(requeueAfterSeconds !== undefined ? { requeueAfterSeconds } : {}),
    },
  };
}

/** How {@link placementApplicationSet} builds an ApplicationSet. */
export interface PlacementApplicationSetOptions {
  readonly name: string;
  /** The Placement whose decisions its generator reads. */
  readonly placement: string;
  /** @default 'argocd' */
  readonly namespace?: string;
  /** More metadata (uid, generation, deletionTimestamp). */
  readonly metadata?: Partial<KubeObject['metadata']>;
  /** The generator's requeue interval; left out when not given. */
  readonly requeueAfterSeconds?: number;
  /** The generator ConfigMap. @default pullfleet's (`ocm-placement-generator`) */
  readonly configMapRef?: string;
  /** A generator the placement generator is crossed with in a matrix; the placement generator stands alone without it. */
  readonly matrixWith?: ApplicationSetGenerator;
  /** The Application template. */
  readonly template: NonNullable<ApplicationSet['spec']['template']>;
}

/** An ApplicationSet generating one Application per cluster a Placement selects. */
export function placementApplicationSet(options: PlacementApplicationSetOptions): ApplicationSet {
  const decisions = placementGenerator(options.placement, options.requeueAfterSeconds, options.configMapRef);
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'ApplicationSet',
    metadata: { name: options.name, namespace: options.namespace ?? 'argocd', ...options.metadata },
    spec: {
      generators: [options.matrixWith ? { matrix: { generators: [decisions, options.matrixWith] } } : decisions],
      template: options.template,
    },
  };
}

/** How {@link pullTemplate} builds an ApplicationSet's Application template. */
export interface PullTemplateOptions {
  /** @default 'https://git.example/apps.git' */
  readonly repoURL?: string;
  /** Whether the template carries Argo CD's skip-reconcile annotation. @default true */
  readonly skipReconcile?: boolean;
}

/**
 * The template of a pull ApplicationSet for `app`: Applications `{{name}}-app`, pull-labelled, targeting the
 * decided cluster, deploying path `app` of `repoURL` into namespace `app`.
 */
export function pullTemplate(
  app: string,
  options: PullTemplateOptions = {},
): NonNullable<ApplicationSet['spec']['template']> {
  return {
    metadata: {
      name: `{{name}}-${app}`,
      labels: { [PULL_LABEL]: 'true' },
      annotations: {
        [MANAGED_CLUSTER_ANNOTATION]: '{{name}}',
        ...(options.skipReconcile === false ? {} : { [SKIP_RECONCILE_ANNOTATION]: 'true' }),
      },
    },
    spec: {
      project: 'default',
      source: { repoURL: options.repoURL ?? 'https://git.example/apps.git', path: app },
      destination: { server: 'https://kubernetes.default.svc', namespace: app },
    },
  };
}
