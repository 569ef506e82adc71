/**
 * ManifestWorks shaped exactly as the two basic-model controllers write them (docs/controller/takeover.md), for the
 * takeover tests and bench/takeover.ts: argocd-pull-integration (`<app>-<uid5>`, pull label, five single-path feedback
 * rules, SSA ignoring `.operation`, no deleteOption) and ACM's propagation controller (same annotations; for
 * ApplicationSet-owned apps the labels `application-set` and `application-set-hash` instead of the pull label; a
 * Namespace, the AppProject and the Application; SelectivelyOrphan for the first two). Neither shortens the name:
 * `<app>-<uid5>` may run past 63 characters.
 */
import { createHash } from 'node:crypto';
import type { Application, JsonObject, ManifestWork } from '../../src/model/core/types.js';

const APPS = 'apps.open-cluster-management.io';
const PULL = `${APPS}/pull-to-ocm-managed-cluster`;
const APPSET = `${APPS}/application-set`;
const APPSET_HASH = `${APPS}/application-set-hash`;
const HOSTING = `${APPS}/hosting-applicationset`;
const HUB_NS = `${APPS}/hub-application-namespace`;
const HUB_NAME = `${APPS}/hub-application-name`;
const CLUSTER = `${APPS}/ocm-managed-cluster`;
const APP_NS = `${APPS}/ocm-managed-cluster-app-namespace`;
const SKIP = 'argocd.argoproj.io/skip-reconcile';

export type LegacyFlavour = 'argocd-pull-integration' | 'acm';

function appSetOf(app: Application): string | undefined {
  return app.metadata.ownerReferences?.find((ref) => ref.kind === 'ApplicationSet')?.name;
}

/** The payload Application as both controllers build it (destination name emptied, server in-cluster). */
function legacyPayload(app: Application, flavour: LegacyFlavour): JsonObject {
  const annotations = app.metadata.annotations ?? {};
  const namespace = annotations[APP_NS] || app.metadata.namespace || 'argocd';
  const labels = Object.fromEntries(Object.entries(app.metadata.labels ?? {}).filter(([key]) => key !== PULL));
  const payloadAnnotations = Object.fromEntries(
    Object.entries(annotations).filter(([key]) => ![CLUSTER, APP_NS, SKIP].includes(key)),
  );
  const appSet = appSetOf(app);
  if (appSet) {
    labels[APPSET] = 'true';
    payloadAnnotations[HOSTING] = `${app.metadata.namespace}/${appSet}`;
  }
  const spec = JSON.parse(JSON.stringify(app.spec)) as Application['spec'] & { destination: Record<string, string> };
  spec.destination = { ...(spec.destination ?? {}), name: '', server: 'https://kubernetes.default.svc' };
  if (flavour === 'acm' && !spec.destination.namespace) spec.destination.namespace = namespace;
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: app.metadata.name,
      namespace,
      labels,
      annotations: payloadAnnotations,
      ...(app.metadata.finalizers ? { finalizers: app.metadata.finalizers } : {}),
    },
    spec,
    ...(app.operation ? { operation: app.operation } : {}),
  } as unknown as JsonObject;
}

/** The legacy work name: `<app>-<first 5 characters of the app UID>`, never shortened (the same for both flavours). */
export function legacyWorkName(app: Application, _flavour: LegacyFlavour): string {
  return `${app.metadata.name}-${app.metadata.uid!.slice(0, 5)}`;
}

/**
 * The work `flavour` writes for `app` (which must carry its uid). `project` is the AppProject ACM copies
 * (omitted for openshift-gitops/default, as ACM does).
 */
export function legacyWork(
  app: Application,
  flavour: LegacyFlavour,
  project: { name: string; namespace: string; spec?: JsonObject } = { name: 'default', namespace: 'openshift-gitops' },
): ManifestWork {
  const payload = legacyPayload(app, flavour);
  const payloadMeta = payload.metadata as { name: string; namespace: string };
  const appSet = appSetOf(app);
  let labels: Record<string, string> = { [PULL]: 'true' };
  const annotations: Record<string, string> = { [HUB_NS]: app.metadata.namespace!, [HUB_NAME]: app.metadata.name };
  if (appSet) {
    annotations[HOSTING] = `${app.metadata.namespace}/${appSet}`;
    labels =
      flavour === 'acm'
        ? {
            [APPSET]: 'true',
            [APPSET_HASH]: createHash('sha1').update(`${app.metadata.namespace}/${appSet}`).digest('hex'),
          }
        : { ...labels, [APPSET]: 'true' };
  }
  const ignored =
    flavour === 'acm' ? ['.operation', '.metadata.annotations["argocd.argoproj.io/refresh"]'] : ['.operation'];
  const rules = [
    ['healthStatus', '.status.health.status'],
    ['syncStatus', '.status.sync.status'],
    ['operationStateStartedAt', '.status.operationState.startedAt'],
    ['operationStatePhase', '.status.operationState.phase'],
    ['syncRevision', '.status.sync.revision'],
  ].map(([name, path]) => ({ type: 'JSONPaths', jsonPaths: [{ name, path }] }));
  const manifestConfigs = [
    {
      resourceIdentifier: {
        group: 'argoproj.io',
        resource: 'applications',
        namespace: payloadMeta.namespace,
        name: payloadMeta.name,
      },
      feedbackRules: rules,
      updateStrategy: {
        type: 'ServerSideApply',
        serverSideApply: { force: true, ignoreFields: [{ condition: 'OnSpokeChange', jsonPaths: ignored }] },
      },
    },
  ];
  const work: ManifestWork = {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: {
      name: legacyWorkName(app, flavour),
      namespace: app.metadata.annotations![CLUSTER],
      labels,
      annotations,
    },
    spec: {
      workload: { manifests: [payload] },
      manifestConfigs: manifestConfigs as ManifestWork['spec']['manifestConfigs'],
    },
  };
  if (flavour === 'acm') {
    const namespace = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: payloadMeta.namespace,
        annotations: { 'argocd.argoproj.io/sync-options': 'Delete=false' },
        labels: { 'argocd.argoproj.io/managed-by': 'openshift-gitops' },
      },
    };
    const withProject = !(project.name === 'default' && project.namespace === 'openshift-gitops');
    const appProject = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: project.name, namespace: project.namespace, labels: {}, annotations: {} },
      spec: project.spec ?? { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
    };
    work.spec.workload.manifests = [namespace, ...(withProject ? [appProject as unknown as JsonObject] : []), payload];
    const orphaningRules = [
      { group: '', namespace: '', resource: 'namespaces', name: payloadMeta.namespace },
      ...(withProject
        ? [{ group: 'argoproj.io', namespace: project.namespace, resource: 'appprojects', name: project.name }]
        : []),
    ];
    work.spec.deleteOption = {
      propagationPolicy: 'SelectivelyOrphan',
      selectivelyOrphans: { orphaningRules },
    } as unknown as ManifestWork['spec']['deleteOption'];
  }
  return work;
}
