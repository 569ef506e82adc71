import { describe, expect, test } from '@jest/globals';
import {
  STAND_BY_ANNOTATION,
  APPLICATION_SET_LABEL,
  ARGOCD_TRACKING_ANNOTATION,
  CONSTRUCT_PATH_ANNOTATION,
  DELIVERY_ANNOTATION,
  DESTINATION_NAME_ANNOTATION,
  DESTINATION_SERVER_ANNOTATION,
  HOSTING_APPSET_ANNOTATION,
  IN_CLUSTER_SERVER,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  SPEC_HASH_ANNOTATION,
  SPOKE_APP_NAMESPACE_ANNOTATION,
} from '../../../src/model/core/keys.js';
import { FeedbackScrape, type Application, type JsonObject, type ManifestWork } from '../../../src/model/core/types.js';
import { applyAgentHandback } from '../../../src/model/delivery/hub-application.js';
import {
  isStandBy,
  isRoutedToAgent,
  buildManifestWork,
  buildPayloadApplication,
  FEEDBACK_PATHS,
  jsonSize,
  payloadSpecHash,
  undeclaredFieldOf,
  wrapProblem,
} from '../../../src/model/delivery/manifestwork.js';
import { workUpToDate } from '../../../src/model/reconcile/propagation.js';
import { objectRuleFindings } from '../../../src/model/validation/object-rules.js';

function hubApp(
  overrides: Partial<Application['metadata']> = {},
  spec: Partial<Application['spec']> = {},
): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'guestbook',
      namespace: 'argocd',
      labels: { [PULL_LABEL]: 'true', team: 'web' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [SKIP_RECONCILE_ANNOTATION]: 'true' },
      ...overrides,
    },
    spec: {
      project: 'default',
      source: { repoURL: 'https://example.com/repo.git', path: 'guestbook', targetRevision: 'HEAD' },
      destination: { server: 'https://hub.example:6443', namespace: 'guestbook' },
      ...spec,
    },
  };
}

describe('payload Application (rule by rule)', () => {
  test('GIVEN syncPolicy.automated.enabled (a 3.3+ RollingSync step) THEN the payload says the same without the field, which spokes on Argo CD 3.0 and older do not know', () => {
    const policy = (automated: JsonObject) =>
      buildPayloadApplication(hubApp({}, { syncPolicy: { automated, syncOptions: ['PruneLast=true'] } })).spec
        .syncPolicy;
    expect(policy({ enabled: false, prune: true, selfHeal: true })).toStrictEqual({ syncOptions: ['PruneLast=true'] });
    expect(policy({ enabled: true, prune: true })).toStrictEqual({
      automated: { prune: true },
      syncOptions: ['PruneLast=true'],
    });
    expect(policy({ selfHeal: true })).toStrictEqual({
      automated: { selfHeal: true },
      syncOptions: ['PruneLast=true'],
    });
    // the hub Application is left as it was
    const app = hubApp({}, { syncPolicy: { automated: { enabled: false } } });
    buildPayloadApplication(app);
    expect(app.spec.syncPolicy).toStrictEqual({ automated: { enabled: false } });
  });

  test('GIVEN a syncPolicy left empty (automated disabled by RollingSync, or removed on 2.14-3.2) THEN the payload has none: the work agent would apply {} over the running app as null, which the CRD refuses', () => {
    const payload = (syncPolicy: JsonObject) => buildPayloadApplication(hubApp({}, { syncPolicy })).spec;
    expect('syncPolicy' in payload({ automated: { enabled: false, prune: true } })).toBe(false);
    expect('syncPolicy' in payload({})).toBe(false);
    expect(payload({ automated: { enabled: false }, retry: { limit: 2 } }).syncPolicy).toStrictEqual({
      retry: { limit: 2 },
    });
  });

  test('GIVEN a minimal pull app WHEN wrapped THEN the payload is exactly the rewritten copy', () => {
    const spec = {
      project: 'default',
      source: { repoURL: 'https://example.com/repo.git', path: 'guestbook', targetRevision: 'HEAD' },
      destination: { server: IN_CLUSTER_SERVER, namespace: 'guestbook' },
    };
    expect(buildPayloadApplication(hubApp())).toStrictEqual({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: {
        name: 'guestbook',
        namespace: 'argocd',
        labels: { team: 'web' },
        annotations: { [SPEC_HASH_ANNOTATION]: payloadSpecHash(spec) },
      },
      spec,
    });
  });

  test('GIVEN two hub apps WHEN wrapped THEN the spec hash follows the payload spec only', () => {
    const a = buildPayloadApplication(hubApp());
    const relabelled = buildPayloadApplication(hubApp({ labels: { team: 'api' } }));
    const changed = hubApp();
    changed.spec.source = { ...changed.spec.source, targetRevision: 'v2' };
    expect(relabelled.metadata.annotations?.[SPEC_HASH_ANNOTATION]).toBe(
      a.metadata.annotations?.[SPEC_HASH_ANNOTATION],
    );
    expect(buildPayloadApplication(changed).metadata.annotations?.[SPEC_HASH_ANNOTATION]).not.toBe(
      a.metadata.annotations?.[SPEC_HASH_ANNOTATION],
    );
  });

  test('keeps the name and uses the app-namespace annotation for the namespace', () => {
    const app = hubApp({
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [SPOKE_APP_NAMESPACE_ANNOTATION]: 'gitops' },
    });
    expect(buildPayloadApplication(app).metadata).toMatchObject({ name: 'guestbook', namespace: 'gitops' });
  });

  test('drops the pull label and keeps the other labels', () => {
    expect(buildPayloadApplication(hubApp()).metadata.labels).toStrictEqual({ team: 'web' });
  });

  test('drops hub-only annotations and pullfleet annotations, keeps the rest', () => {
    const app = hubApp({
      annotations: {
        [MANAGED_CLUSTER_ANNOTATION]: 'east',
        [SPOKE_APP_NAMESPACE_ANNOTATION]: 'argocd',
        [SKIP_RECONCILE_ANNOTATION]: 'true',
        [DESTINATION_SERVER_ANNOTATION]: 'https://other:6443',
        [ARGOCD_TRACKING_ANNOTATION]: 'x',
        [CONSTRUCT_PATH_ANNOTATION]: 'hub/guestbook/east',
        [DELIVERY_ANNOTATION]: 'static',
        'notifications.argoproj.io/subscribe': 'slack',
      },
    });
    const { [SPEC_HASH_ANNOTATION]: hash, ...rest } = buildPayloadApplication(app).metadata.annotations ?? {};
    expect(rest).toStrictEqual({ 'notifications.argoproj.io/subscribe': 'slack' });
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
  });

  test('copies finalizers and operation', () => {
    const app = {
      ...hubApp({ finalizers: ['resources-finalizer.argocd.argoproj.io'] }),
      operation: { sync: { revision: 'abc' } },
    };
    const payload = buildPayloadApplication(app);
    expect(payload.metadata.finalizers).toStrictEqual(['resources-finalizer.argocd.argoproj.io']);
    expect(payload.operation).toStrictEqual({ sync: { revision: 'abc' } });
  });

  test('rewrites the destination to in-cluster, or to the override annotations', () => {
    expect(buildPayloadApplication(hubApp()).spec.destination).toStrictEqual({
      server: IN_CLUSTER_SERVER,
      namespace: 'guestbook',
    });
    const byName = hubApp({
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [DESTINATION_NAME_ANNOTATION]: 'in-cluster' },
    });
    expect(buildPayloadApplication(byName).spec.destination).toStrictEqual({
      name: 'in-cluster',
      namespace: 'guestbook',
    });
    const byServer = hubApp({
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [DESTINATION_SERVER_ANNOTATION]: 'https://local:6443' },
    });
    expect(buildPayloadApplication(byServer).spec.destination).toStrictEqual({
      server: 'https://local:6443',
      namespace: 'guestbook',
    });
  });

  test('never carries uid, resourceVersion, ownerReferences, managedFields or status', () => {
    const app: Application = {
      ...hubApp({
        uid: 'u1',
        resourceVersion: '7',
        managedFields: [{}],
        ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: 's', uid: 'u2' }],
      }),
      status: { sync: { status: 'Synced' } },
    };
    const payload = buildPayloadApplication(app);
    for (const key of ['uid', 'resourceVersion', 'managedFields', 'ownerReferences'])
      expect(payload.metadata).not.toHaveProperty(key);
    expect(payload.status).toBeUndefined();
  });

  test('GIVEN an app an ApplicationSet owns WHEN wrapped THEN the payload carries the application-set label and the hosting-applicationset annotation, like the work', () => {
    const app = hubApp({
      ownerReferences: [
        { apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: 'guestbook-set', uid: 'u2' },
      ],
    });
    const work = buildManifestWork(app);
    const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application') as unknown as Application;
    expect(payload.metadata.labels).toStrictEqual({ [APPLICATION_SET_LABEL]: 'true', team: 'web' });
    expect(payload.metadata.annotations).toStrictEqual({
      [HOSTING_APPSET_ANNOTATION]: 'argocd/guestbook-set',
      [SPEC_HASH_ANNOTATION]: payloadSpecHash(payload.spec),
    });
    expect(work.metadata.labels![APPLICATION_SET_LABEL]).toBe('true');
    expect(work.metadata.annotations![HOSTING_APPSET_ANNOTATION]).toBe('argocd/guestbook-set');
    expect(buildPayloadApplication(app)).toStrictEqual(payload);
  });

  test('GIVEN an app no ApplicationSet owns, even with a hub label or annotation of those keys, WHEN wrapped THEN the payload carries neither marker', () => {
    const app = hubApp({
      labels: { [PULL_LABEL]: 'true', [APPLICATION_SET_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [HOSTING_APPSET_ANNOTATION]: 'argocd/stale-set' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'not-a-set', uid: 'u3' }],
    });
    const payload = buildPayloadApplication(app);
    expect(payload.metadata.labels).toBeUndefined();
    expect(Object.keys(payload.metadata.annotations ?? {})).toStrictEqual([SPEC_HASH_ANNOTATION]);
  });

  test('is a fresh object: mutating the payload never touches the hub app', () => {
    const app = hubApp();
    const payload = buildPayloadApplication(app);
    (payload.spec.source as { path: string }).path = 'changed';
    expect(app.spec.source?.path).toBe('guestbook');
  });
});

describe('ManifestWork', () => {
  test('GIVEN a static hub app WHEN wrapped THEN the work is named after the app, lives in the cluster namespace and carries the delivery label', () => {
    const app = hubApp({
      annotations: {
        [MANAGED_CLUSTER_ANNOTATION]: 'east',
        [DELIVERY_ANNOTATION]: 'static',
        [CONSTRUCT_PATH_ANNOTATION]: 'hub/guestbook/east',
      },
    });
    const work = buildManifestWork(app);
    expect(work.metadata).toMatchObject({
      name: 'argocd-guestbook',
      namespace: 'east',
      labels: { [PULL_LABEL]: 'true', [DELIVERY_ANNOTATION]: 'static', 'app.kubernetes.io/managed-by': 'pullfleet' },
      annotations: { [CONSTRUCT_PATH_ANNOTATION]: 'hub/guestbook/east' },
    });
    expect(work.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
  });

  test('asks for every feedback path and ignores .operation on spoke change', () => {
    const config = buildManifestWork(hubApp(), { feedbackScrapeType: FeedbackScrape.WATCH }).spec.manifestConfigs![0];
    expect(config.resourceIdentifier).toStrictEqual({
      group: 'argoproj.io',
      resource: 'applications',
      namespace: 'argocd',
      name: 'guestbook',
    });
    expect(config.feedbackRules![0].jsonPaths!.map((p) => [p.name, p.path])).toStrictEqual(
      FEEDBACK_PATHS.map(([n, p]) => [n, p]),
    );
    expect(config.feedbackScrapeType).toBe('Watch');
    expect(config.updateStrategy).toStrictEqual({
      type: 'ServerSideApply',
      serverSideApply: { force: true, ignoreFields: [{ condition: 'OnSpokeChange', jsonPaths: ['.operation'] }] },
    });
  });

  test('puts prerequisites before the payload', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'guestbook' } };
    const manifests = buildManifestWork(hubApp(), { prerequisites: [ns] }).spec.workload.manifests;
    expect(manifests.map((m) => m.kind)).toStrictEqual(['Namespace', 'Application']);
  });

  test('fits a long work name into 63 characters with a hash', () => {
    const work = buildManifestWork(hubApp({ name: 'a'.repeat(80) }));
    expect(work.metadata.name).toHaveLength(63);
    expect(work.metadata.name).toMatch(/^argocd-a+-[0-9a-f]{8}$/);
  });

  test('every work shares one frozen copy of the feedback, condition and update parts, so no caller changes them for one work', () => {
    const one = buildManifestWork(hubApp({ name: 'one' })).spec.manifestConfigs![0];
    const two = buildManifestWork(hubApp({ name: 'two' })).spec.manifestConfigs![0];
    expect(two.feedbackRules).toBe(one.feedbackRules);
    expect(two.updateStrategy).toBe(one.updateStrategy);
    expect(Object.isFrozen(one.feedbackRules![0].jsonPaths![0])).toBe(true);
    expect(() => {
      one.feedbackRules![0].jsonPaths!.push({ name: 'extra', path: '.x' });
    }).toThrow(TypeError);
    // The identifier names the work's own Application.
    expect(one.resourceIdentifier).not.toBe(two.resourceIdentifier);
    expect(Object.isFrozen(one.resourceIdentifier)).toBe(false);
  });

  test('fails when the target cluster is local-cluster', () => {
    const app = hubApp({ annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'local-cluster' } });
    expect(wrapProblem(app)).toBe(
      'local-cluster is the hub itself and never a pull-delivery target: choose a spoke cluster',
    );
    expect(() => buildManifestWork(app)).toThrow('Application argocd/guestbook: local-cluster is the hub itself');
  });
});

describe('workUpToDate (exact on what pullfleet owns)', () => {
  const owned = () => buildManifestWork(hubApp({ annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'spoke1' } }));

  test('GIVEN the work as built WHEN compared THEN it is up to date, also with the CRD defaults filled in and foreign labels added', () => {
    const observed = structuredClone(owned());
    observed.metadata.labels!['team.example.com/owner'] = 'payments';
    observed.spec.manifestConfigs![0].feedbackScrapeType = FeedbackScrape.POLL;
    expect(workUpToDate(observed, owned())).toBe(true);
  });

  test.each([
    [
      'a pullfleet label that should be gone',
      (work: ManifestWork) => (work.metadata.labels![APPLICATION_SET_LABEL] = 'true'),
    ],
    [
      'a pullfleet annotation that should be gone',
      (work: ManifestWork) => (work.metadata.annotations![HOSTING_APPSET_ANNOTATION] = 'argocd/old-set'),
    ],
    [
      'feedbackScrapeType Watch when Poll is wanted',
      (work: ManifestWork) => (work.spec.manifestConfigs![0].feedbackScrapeType = FeedbackScrape.WATCH),
    ],
    [
      'an extra manifestConfig',
      (work: ManifestWork) => work.spec.manifestConfigs!.push(structuredClone(work.spec.manifestConfigs![0])),
    ],
    ['another delete option', (work: ManifestWork) => (work.spec.deleteOption = { propagationPolicy: 'Orphan' })],
  ])('fails when the observed work carries %s', (_case, change) => {
    const observed = structuredClone(owned());
    change(observed);
    expect(workUpToDate(observed, owned())).toBe(false);
  });
});

describe('a hand-back from argocd-agent (step 1: the agent may still hold the spoke Application)', () => {
  const adopting = () =>
    hubApp({
      annotations: {
        [MANAGED_CLUSTER_ANNOTATION]: 'spoke1',
        [STAND_BY_ANNOTATION]: 'true',
        [DESTINATION_NAME_ANNOTATION]: 'in-cluster',
      },
    });

  test('GIVEN the adopt annotation THEN the work orphans on delete, only creates the Application if missing and keeps the agent destination', () => {
    const work = buildManifestWork(adopting());
    expect(work.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
    expect(work.spec.manifestConfigs![0].updateStrategy).toStrictEqual({ type: 'CreateOnly' });
    // feedback still flows back
    expect(work.spec.manifestConfigs![0].feedbackRules![0].jsonPaths).toHaveLength(FEEDBACK_PATHS.length);
    const payload = work.spec.workload.manifests.at(-1) as unknown as Application;
    expect(payload.spec.destination).toStrictEqual({ name: 'in-cluster', namespace: 'guestbook' });
    expect(payload.metadata.annotations?.[STAND_BY_ANNOTATION]).toBeUndefined();
    // the stand-by work compares equal to itself with the CRD defaults filled in, and differs from the normal one
    expect(workUpToDate(structuredClone(work), buildManifestWork(adopting()))).toBe(true);
    const normal = hubApp({
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'spoke1', [DESTINATION_NAME_ANNOTATION]: 'in-cluster' },
    });
    expect(workUpToDate(work, buildManifestWork(normal))).toBe(false);
    expect(isStandBy(adopting())).toBe(true);
    // Routed to a managed agent only while standing by with a destination name other than in-cluster.
    const routed = (name: string | undefined, standBy: boolean) =>
      isRoutedToAgent(
        hubApp(
          {
            annotations: {
              [MANAGED_CLUSTER_ANNOTATION]: 'spoke1',
              ...(standBy ? { [STAND_BY_ANNOTATION]: 'true' } : {}),
            },
          },
          { destination: { ...(name ? { name } : { server: IN_CLUSTER_SERVER }), namespace: 'guestbook' } },
        ),
      );
    expect([
      routed('spoke1', true),
      routed('in-cluster', true),
      routed(undefined, true),
      routed('spoke1', false),
    ]).toStrictEqual([true, false, false, false]);
    expect(isStandBy(normal)).toBe(false);
  });

  test('GIVEN a basic hub app shaped for step 1 THEN it stays routed to the agent, without skip-reconcile; the rules refuse either half missing', () => {
    const base = hubApp({
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'spoke1', [SKIP_RECONCILE_ANNOTATION]: 'true' },
    });
    const step1 = applyAgentHandback(base, 'spoke1', { standBy: true, route: true, agentDestination: true });
    expect(step1.spec.destination).toStrictEqual({ name: 'spoke1', namespace: 'guestbook' });
    expect(step1.metadata.annotations).toMatchObject({
      [STAND_BY_ANNOTATION]: 'true',
      [DESTINATION_NAME_ANNOTATION]: 'in-cluster',
    });
    expect(step1.metadata.annotations?.[SKIP_RECONCILE_ANNOTATION]).toBeUndefined();
    expect(objectRuleFindings(step1 as never).filter((f) => f.severity === 'error')).toStrictEqual([]);
    // unchanged without a hand-back
    expect(applyAgentHandback(base, 'spoke1', { standBy: false, route: false, agentDestination: false })).toBe(base);

    const frozen = {
      ...step1,
      metadata: {
        ...step1.metadata,
        annotations: { ...step1.metadata.annotations, [SKIP_RECONCILE_ANNOTATION]: 'true' },
      },
    };
    expect(
      objectRuleFindings(frozen as never)
        .map((f) => f.message)
        .join('\n'),
    ).toContain('which would stop reconciling it');
    const misrouted = { ...step1, spec: { ...step1.spec, destination: { name: 'spoke2', namespace: 'guestbook' } } };
    expect(
      objectRuleFindings(misrouted as never)
        .map((f) => f.message)
        .join('\n'),
    ).toContain('the principal would tell the agent on "spoke1" to delete its copy');
    // standing by without routing (a move from agent-autonomous) is the normal basic shape: skip-reconcile needed
    const unrouted = {
      ...step1,
      spec: { ...step1.spec, destination: { server: IN_CLUSTER_SERVER, namespace: 'guestbook' } },
    };
    expect(
      objectRuleFindings(unrouted as never)
        .map((f) => f.message)
        .join('\n'),
    ).toContain('is a pull app without argocd.argoproj.io/skip-reconcile');
    const inCluster = {
      ...base,
      spec: { ...base.spec, destination: { server: IN_CLUSTER_SERVER, namespace: 'guestbook' } },
    };
    const autonomous = applyAgentHandback(inCluster, 'spoke1', {
      standBy: true,
      route: false,
      agentDestination: false,
    });
    expect(autonomous.spec.destination).toStrictEqual(inCluster.spec.destination);
    expect(autonomous.metadata.annotations).toMatchObject({
      [STAND_BY_ANNOTATION]: 'true',
      [SKIP_RECONCILE_ANNOTATION]: 'true',
    });
    expect(autonomous.metadata.annotations?.[DESTINATION_NAME_ANNOTATION]).toBeUndefined();
    expect(objectRuleFindings(autonomous as never).filter((f) => f.severity === 'error')).toStrictEqual([]);
    expect(buildManifestWork(autonomous).spec.manifestConfigs![0].updateStrategy).toStrictEqual({
      type: 'CreateOnly',
    });
  });
});

describe('jsonSize', () => {
  const bytes = (value: unknown) => {
    const text = JSON.stringify(value);
    return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  };

  test.each([
    ['plain strings', 'guestbook'],
    ['escapes, control characters, multi-byte and lone surrogates', 'a"b\\c\n\t\u0001é€😀\ud800'],
    ['numbers', [0, -0, 1.5, -1e-7, 1e21, NaN, Infinity]],
    ['booleans and null', [true, false, null]],
    ['holes JSON writes as null in arrays', [undefined, () => 1, Symbol('s'), 3]],
    ['members JSON leaves out', { a: undefined, b: () => 1, c: 1 }],
    ['keys that need escaping', { 'k"é\n': [1, {}], '': [] }],
    ['toJSON', { at: new Date(0) }],
    ['empty containers', [{}, [], '']],
  ])('counts %s as the bytes of JSON.stringify', (_name, value) => {
    expect(jsonSize(value)).toBe(bytes(value));
  });

  test('counts a ManifestWork as the bytes of its JSON', () => {
    const work = buildManifestWork(
      hubApp({
        annotations: {
          [MANAGED_CLUSTER_ANNOTATION]: 'east',
          [SKIP_RECONCILE_ANNOTATION]: 'true',
          'example.com/note': 'ünïcode "quoted"',
        },
      }),
    );
    expect(jsonSize(work)).toBe(bytes(work));
  });
});

describe('undeclaredFieldOf', () => {
  test.each([
    [
      'a server-side apply kube-apiserver refused',
      'PATCH /apis/work.open-cluster-management.io/v1/namespaces/c1/manifestworks/argocd-a: 500 failed to create typed patch object (c1/argocd-a; work.open-cluster-management.io/v1, Kind=ManifestWork): .spec.manifestConfigs[0].conditionRules: field not declared in schema',
      '.spec.manifestConfigs[0].conditionRules',
    ],
    ['a strict write', 'strict decoding error: unknown field "spec.feedbackScrapeType"', 'spec.feedbackScrapeType'],
    ['any other refusal', 'PATCH x: 500 etcdserver: request timed out', undefined],
  ])('names the field of %s', (_what, message, field) => {
    expect(undeclaredFieldOf(message)).toBe(field);
  });
});
