/**
 * Objects the controller tests and benchmarks seed the API double's store with: a ManagedClusterSet bound
 * into the Argo CD namespace, ManagedClusters in that set, namespaces, pull-labelled hub Applications, and
 * the feedback the work agent writes into a ManifestWork's status.
 */
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { WorkAgent, type SpokeApplicationState } from '../support/work-agent.js';
import { type KubeObj, type StoreClient } from './fake-apiserver.js';

/** The work agent as a status builder only (it never reaches a cluster here). */
const AGENT = new WorkAgent(undefined as never);

/** Creates the Namespaces `names`, in order. */
export function seedNamespaces(store: StoreClient, names: readonly string[]): void {
  for (const name of names) store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** Creates the ManagedClusterSet `name` and its ManagedClusterSetBinding in `bindingNamespace`. */
export function seedClusterSet(store: StoreClient, name: string, bindingNamespace = 'argocd'): void {
  store.create({
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSet',
    metadata: { name },
    spec: {},
  });
  store.create({
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSetBinding',
    metadata: { name, namespace: bindingNamespace },
    spec: { clusterSet: name },
  });
}

/** Creates the ManagedCluster `name`, labelled into the set `clusterSet` and accepted by the hub. */
export function seedManagedCluster(store: StoreClient, name: string, clusterSet: string): void {
  store.create({
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name, labels: { 'cluster.open-cluster-management.io/clusterset': clusterSet } },
    spec: { hubAcceptsClient: true },
  });
}

/** What {@link seedPullApplication} creates. */
export interface PullApplicationOptions {
  /** The Application's name. */
  readonly name: string;
  /** The ManagedCluster it is pulled to (its managed-cluster annotation). */
  readonly cluster: string;
  /** The hub namespace it lives in. @default 'argocd' */
  readonly namespace?: string;
  /** Metadata fields added after name, namespace, labels and annotations (finalizers, ownerReferences). */
  readonly metadata?: KubeObj;
  /** The destination namespace on the spoke. @default - the Application's name */
  readonly destinationNamespace?: string;
  /** The source. @default - path `<name>` of `https://git.example/apps` */
  readonly source?: KubeObj;
  /** Top-level fields added last, such as `operation`. */
  readonly extra?: KubeObj;
}

/**
 * Creates a pull-labelled hub Application for `cluster` in project `default`, deployed in-cluster on the
 * spoke, which the hub's own Argo CD skips; returns it as stored.
 */
export function seedPullApplication(store: StoreClient, options: PullApplicationOptions): Application {
  const { name, cluster, namespace = 'argocd', metadata = {}, destinationNamespace = name, extra = {} } = options;
  return store.create<Application>({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name,
      namespace,
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: cluster, 'argocd.argoproj.io/skip-reconcile': 'true' },
      ...metadata,
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: destinationNamespace },
      source: options.source ?? { repoURL: 'https://git.example/apps', path: name },
    },
    ...extra,
  });
}

/**
 * Plays the OCM work agent for the work of `app` in `cluster`: the status test/support/work-agent.ts writes
 * for a spoke Application in `state` (Applied, the feedback the work asks for), through the status subresource.
 */
export function seedWorkFeedback(store: StoreClient, cluster: string, app: string, state: SpokeApplicationState): void {
  const work = store.get<KubeObj>('manifestworks', cluster, manifestWorkName('argocd', app));
  work.status = AGENT.statusFor(work as unknown as ManifestWork, state);
  store.updateStatus(work);
}
