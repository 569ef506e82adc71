/**
 * The whole Application spec through the constructs (issue 28): each source type and app prop renders into the
 * hub Application, the payload its ManifestWork carries and the ApplicationSet template, in the same bytes
 * whatever order maps were written in; every bad input is one error naming the app, the field, the value and
 * the fix.
 */
import { describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  Placement,
  PrunePropagationPolicy,
  PullApplication,
  PullApplicationSet,
  Spoke,
  SyncOption,
  type PullAppOptions,
} from '../../src/constructs/index.js';
import { find, smallFleet, type Obj } from './helpers.js';
import { argoSpecUnsupported } from '../../src/model/core/argo-spec-features.js';
import type { JsonObject } from '../../src/model/core/types.js';

const REPO = 'https://git.example.com/platform/apps.git';
const CHARTS = 'https://charts.example.com';
const grants = [{ apiGroup: 'apps', resources: ['deployments'] }];

type AppLike = Obj & { spec: Record<string, unknown> };

/** The hub Application, its work's payload and the ApplicationSet template's spec for the same options. */
function rendered(options: Partial<PullAppOptions>) {
  const { fleet, hub, east } = smallFleet();
  const props = { destinationNamespace: 'web', resources: grants, ...options } as PullAppOptions;
  new PullApplication(hub, 'web', { ...props, spokes: [east] });
  new PullApplicationSet(hub, 'api', { ...props, placement: new Placement(hub, 'everywhere') });
  const hubApp = find(fleet, 'Application', 'web-east') as AppLike;
  const work = find(fleet, 'ManifestWork', 'argocd-web-east', 'east') as Obj & {
    spec: { workload: { manifests: AppLike[] } };
  };
  const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application')!;
  const appSet = find(fleet, 'ApplicationSet', 'api') as Obj & {
    spec: { template: { metadata: { annotations?: Record<string, string> }; spec: Record<string, unknown> } };
  };
  return { fleet, hubApp, payload, template: appSet.spec.template, findings: fleet.findings() };
}

/** `spec.source` of all three renderings, checked to be the same, and returned once. */
function sourceOf(options: Partial<PullAppOptions>): unknown {
  const { hubApp, payload, template, findings } = rendered(options);
  expect(findings.errors).toStrictEqual([]);
  expect(payload.spec.source).toStrictEqual(hubApp.spec.source);
  expect(template.spec.source).toStrictEqual(hubApp.spec.source);
  return hubApp.spec.source;
}

/** The error messages of a fleet whose app has `options`; each problem must be reported once. */
function errorsOf(options: Partial<PullAppOptions>): string[] {
  const { fleet, hub, east } = smallFleet();
  new PullApplication(hub, 'web', {
    destinationNamespace: 'web',
    resources: grants,
    spokes: [east],
    ...options,
  });
  return fleet.findings().errors.map((e) => e.message);
}

function expectOneError(options: Partial<PullAppOptions>, fragment: string): void {
  const errors = errorsOf(options);
  const hits = errors.filter((e) => e.includes(fragment));
  expect({ hits: hits.length, errors }).toStrictEqual({ hits: 1, errors: expect.anything() as unknown });
}

describe('sources', () => {
  test('GIVEN AppSource.git with directory options THEN spec.source has them, Jsonnet lists in the order given', () => {
    expect(
      sourceOf({
        source: AppSource.git({
          repoURL: REPO,
          path: 'web',
          directory: {
            recurse: true,
            include: '{*.yaml,*.jsonnet}',
            exclude: 'test-*.yaml',
            jsonnet: {
              extVars: [
                { name: 'env', value: 'prod' },
                { name: 'replicas', value: '3', code: true },
              ],
              tlas: [{ name: 'region', value: 'us-east' }],
              libs: ['vendor', 'lib'],
            },
          },
        }),
      }),
    ).toStrictEqual({
      repoURL: REPO,
      path: 'web',
      targetRevision: 'HEAD',
      directory: {
        recurse: true,
        include: '{*.yaml,*.jsonnet}',
        exclude: 'test-*.yaml',
        jsonnet: {
          extVars: [
            { name: 'env', value: 'prod' },
            { name: 'replicas', value: '3', code: true },
          ],
          tlas: [{ name: 'region', value: 'us-east' }],
          libs: ['vendor', 'lib'],
        },
      },
    });
  });

  test('GIVEN AppSource.git as before (path only) THEN spec.source is unchanged', () => {
    expect(sourceOf({ source: AppSource.git({ repoURL: REPO, path: 'web' }) })).toStrictEqual({
      repoURL: REPO,
      path: 'web',
      targetRevision: 'HEAD',
    });
  });

  test('GIVEN AppSource.kustomize with every option THEN spec.source.kustomize has them', () => {
    expect(
      sourceOf({
        source: AppSource.kustomize({
          repoURL: REPO,
          path: 'overlays/prod',
          targetRevision: 'v1.4.0',
          images: ['nginx:1.25', 'web=registry.example.com/team/web:2.0', 'api@sha256:' + 'a'.repeat(64)],
          namePrefix: 'prod-',
          nameSuffix: '-v2',
          commonLabels: { tier: 'web', team: 'platform' },
          commonAnnotations: { 'example.com/owner': 'platform' },
          namespace: 'web',
          replicas: [{ name: 'web', count: 3 }],
          patches: [
            { path: 'patches/limits.yaml' },
            {
              patch: '- op: replace\n  path: /spec/replicas\n  value: 2\n',
              target: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'web' },
              options: { allowNameChange: true },
            },
          ],
          components: ['../../components/monitoring'],
          version: 'v5.4.3',
        }),
      }),
    ).toStrictEqual({
      repoURL: REPO,
      path: 'overlays/prod',
      targetRevision: 'v1.4.0',
      kustomize: {
        namePrefix: 'prod-',
        nameSuffix: '-v2',
        images: ['nginx:1.25', 'web=registry.example.com/team/web:2.0', 'api@sha256:' + 'a'.repeat(64)],
        commonLabels: { team: 'platform', tier: 'web' },
        commonAnnotations: { 'example.com/owner': 'platform' },
        namespace: 'web',
        replicas: [{ name: 'web', count: 3 }],
        patches: [
          { path: 'patches/limits.yaml' },
          {
            patch: '- op: replace\n  path: /spec/replicas\n  value: 2\n',
            target: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'web' },
            options: { allowNameChange: true },
          },
        ],
        components: ['../../components/monitoring'],
        version: 'v5.4.3',
      },
    });
  });

  test('GIVEN AppSource.helm from a chart repository with every Helm option THEN spec.source.helm keeps list order', () => {
    expect(
      sourceOf({
        source: AppSource.helm({
          repoURL: CHARTS,
          chart: 'web',
          targetRevision: '1.2.*',
          valueFiles: ['values-prod.yaml', 'values-east.yaml', 'https://config.example.com/web.yaml'],
          ignoreMissingValueFiles: true,
          parameters: [
            { name: 'image.tag', value: '2.0' },
            { name: 'ingress.hosts[0]', value: 'web.example.com', forceString: true },
          ],
          fileParameters: [{ name: 'config', path: 'files/config.json' }],
          values: { replicas: 3 },
          skipCrds: true,
          skipSchemaValidation: true,
          releaseName: 'web-prod',
          namespace: 'web',
          version: 'v3',
          passCredentials: false,
        }),
      }),
    ).toStrictEqual({
      repoURL: CHARTS,
      chart: 'web',
      targetRevision: '1.2.*',
      helm: {
        releaseName: 'web-prod',
        namespace: 'web',
        valueFiles: ['values-prod.yaml', 'values-east.yaml', 'https://config.example.com/web.yaml'],
        ignoreMissingValueFiles: true,
        parameters: [
          { name: 'image.tag', value: '2.0' },
          { name: 'ingress.hosts[0]', value: 'web.example.com', forceString: true },
        ],
        fileParameters: [{ name: 'config', path: 'files/config.json' }],
        valuesObject: { replicas: 3 },
        skipCrds: true,
        skipSchemaValidation: true,
        version: 'v3',
        passCredentials: false,
      },
    });
  });

  test('GIVEN an OCI registry without scheme THEN it is a chart source as written (every Argo CD release)', () => {
    expect(
      sourceOf({
        source: AppSource.helm({
          repoURL: 'registry-1.docker.io/bitnamicharts',
          chart: 'nginx',
          targetRevision: '15.9.0',
        }),
      }),
    ).toStrictEqual({ repoURL: 'registry-1.docker.io/bitnamicharts', chart: 'nginx', targetRevision: '15.9.0' });
  });

  test('GIVEN an oci:// registry THEN it renders the Argo CD 3.1 OCI form: the chart in repoURL, path "."', () => {
    expect(
      sourceOf({
        source: AppSource.helm({
          repoURL: 'oci://ghcr.io/example/charts/',
          chart: 'web',
          targetRevision: '1.0.0',
          values: { a: 1 },
        }),
      }),
    ).toStrictEqual({
      repoURL: 'oci://ghcr.io/example/charts/web',
      path: '.',
      targetRevision: '1.0.0',
      helm: { valuesObject: { a: 1 } },
    });
  });

  test('GIVEN AppSource.helmGit THEN a Git path with a helm block (empty when no option is set)', () => {
    expect(sourceOf({ source: AppSource.helmGit({ repoURL: REPO, path: 'charts/web' }) })).toStrictEqual({
      repoURL: REPO,
      path: 'charts/web',
      targetRevision: 'HEAD',
      helm: {},
    });
    expect(
      sourceOf({
        source: AppSource.helmGit({
          repoURL: REPO,
          path: 'charts/web',
          targetRevision: 'main',
          valueFiles: ['prod.yaml'],
        }),
      }),
    ).toStrictEqual({
      repoURL: REPO,
      path: 'charts/web',
      targetRevision: 'main',
      helm: { valueFiles: ['prod.yaml'] },
    });
  });

  test('GIVEN AppSource.plugin THEN spec.source.plugin with env sorted by name', () => {
    expect(
      sourceOf({
        source: AppSource.plugin({
          repoURL: REPO,
          path: 'web',
          name: 'argocd-vault-plugin-v1.0',
          env: { REGION: 'us-east', ENVIRONMENT: 'prod' },
        }),
      }),
    ).toStrictEqual({
      repoURL: REPO,
      path: 'web',
      targetRevision: 'HEAD',
      plugin: {
        name: 'argocd-vault-plugin-v1.0',
        env: [
          { name: 'ENVIRONMENT', value: 'prod' },
          { name: 'REGION', value: 'us-east' },
        ],
      },
    });
  });

  test('GIVEN the Kustomize label, annotation, component and Helm-capability options THEN spec.source.kustomize has them', () => {
    expect(
      sourceOf({
        source: AppSource.kustomize({
          repoURL: REPO,
          path: 'overlays/prod',
          commonLabels: { team: 'web' },
          forceCommonLabels: true,
          labelWithoutSelector: true,
          labelIncludeTemplates: true,
          commonAnnotations: { 'example.com/app': '$ARGOCD_APP_NAME' },
          forceCommonAnnotations: false,
          commonAnnotationsEnvsubst: true,
          components: ['../components/monitoring'],
          ignoreMissingComponents: true,
          kubeVersion: '1.30',
          apiVersions: ['monitoring.coreos.com/v1/ServiceMonitor', 'v1'],
        }),
      }),
    ).toStrictEqual({
      repoURL: REPO,
      path: 'overlays/prod',
      targetRevision: 'HEAD',
      kustomize: {
        commonLabels: { team: 'web' },
        commonAnnotations: { 'example.com/app': '$ARGOCD_APP_NAME' },
        components: ['../components/monitoring'],
        forceCommonLabels: true,
        labelWithoutSelector: true,
        labelIncludeTemplates: true,
        forceCommonAnnotations: false,
        commonAnnotationsEnvsubst: true,
        ignoreMissingComponents: true,
        kubeVersion: '1.30',
        apiVersions: ['monitoring.coreos.com/v1/ServiceMonitor', 'v1'],
      },
    });
  });

  test("GIVEN Helm version 'v4' THEN it renders, and a spoke that declares Argo CD before 3.5 refuses it", () => {
    const source = AppSource.helm({ repoURL: CHARTS, chart: 'web', targetRevision: '1.0.0', version: 'v4' });
    expect((sourceOf({ source }) as { helm: unknown }).helm).toStrictEqual({ version: 'v4' });
    const spec: JsonObject = { project: 'default', source: source.toJson() };
    expect(argoSpecUnsupported(spec, '3.4.7').map((r) => [r.path, r.since])).toStrictEqual([
      ['spec.source.helm.version', '3.5'],
    ]);
    expect(argoSpecUnsupported(spec, '3.5.1')).toStrictEqual([]);
  });

  test('GIVEN Helm skipTests, kubeVersion and apiVersions THEN spec.source.helm has them', () => {
    const source = sourceOf({
      source: AppSource.helm({
        repoURL: CHARTS,
        chart: 'web',
        targetRevision: '1.0.0',
        skipTests: true,
        kubeVersion: 'v1.30.2',
        apiVersions: ['apps/v1', 'gateway.networking.k8s.io/v1/HTTPRoute'],
      }),
    }) as { helm: unknown };
    expect(source.helm).toStrictEqual({
      skipTests: true,
      kubeVersion: 'v1.30.2',
      apiVersions: ['apps/v1', 'gateway.networking.k8s.io/v1/HTTPRoute'],
    });
  });

  test('GIVEN plugin parameters THEN spec.source.plugin.parameters in the order given, each with its one value', () => {
    const source = sourceOf({
      source: AppSource.plugin({
        repoURL: REPO,
        path: 'web',
        parameters: [
          { name: 'replicas', string: '3' },
          { name: 'regions', array: ['eu', 'us'] },
          { name: 'labels', map: { tier: 'web', env: 'prod' } },
        ],
      }),
    }) as { plugin: unknown };
    expect(source.plugin).toStrictEqual({
      parameters: [
        { name: 'replicas', string: '3' },
        { name: 'regions', array: ['eu', 'us'] },
        { name: 'labels', map: { env: 'prod', tier: 'web' } },
      ],
    });
  });

  test('GIVEN sources with a ref source THEN spec.sources (no spec.source) in the hub app, the payload and the template', () => {
    const { hubApp, payload, template, findings } = rendered({
      sources: [
        AppSource.helm({
          repoURL: CHARTS,
          chart: 'web',
          targetRevision: '1.0.0',
          valueFiles: ['$values/web/prod.yaml'],
        }),
        AppSource.ref('values', { repoURL: REPO, targetRevision: 'main' }),
      ],
    });
    expect(findings.errors).toStrictEqual([]);
    const expected = [
      { repoURL: CHARTS, chart: 'web', targetRevision: '1.0.0', helm: { valueFiles: ['$values/web/prod.yaml'] } },
      { repoURL: REPO, targetRevision: 'main', ref: 'values' },
    ];
    for (const app of [hubApp, payload, { spec: template.spec }]) {
      expect(app.spec.sources).toStrictEqual(expected);
      expect(app.spec.source).toBeUndefined();
    }
  });

  test('GIVEN named sources THEN each has its name, and the source it was made from stays unnamed', () => {
    const git = AppSource.git({ repoURL: REPO, path: 'web' });
    const { hubApp } = rendered({
      sources: [git.withName('app'), AppSource.ref('values', { repoURL: REPO }).withName('values')],
    });
    expect(hubApp.spec.sources).toStrictEqual([
      { repoURL: REPO, path: 'web', targetRevision: 'HEAD', name: 'app' },
      { repoURL: REPO, targetRevision: 'HEAD', ref: 'values', name: 'values' },
    ]);
    expect(git.toJson()).toStrictEqual({ repoURL: REPO, path: 'web', targetRevision: 'HEAD' });
  });

  test('GIVEN two sources of one name, or an empty name THEN one error each', () => {
    const git = AppSource.git({ repoURL: REPO, path: 'web' });
    expectOneError(
      { sources: [git.withName('app'), AppSource.git({ repoURL: REPO, path: 'api' }).withName('app')] },
      'sources of app "web" are both named "app" (sources[0] and sources[1])',
    );
    expectOneError({ source: git.withName(' ') }, 'withName(" "): a source name is not empty');
  });

  test('GIVEN sources with one source THEN it still renders spec.sources', () => {
    const { hubApp } = rendered({ sources: [AppSource.git({ repoURL: REPO, path: 'web' })] });
    expect(hubApp.spec.sources).toStrictEqual([{ repoURL: REPO, path: 'web', targetRevision: 'HEAD' }]);
  });
});

describe('app props', () => {
  const source = AppSource.git({ repoURL: REPO, path: 'web' });

  test('GIVEN retry, managed namespace metadata, ignoreDifferences, info and revisionHistoryLimit THEN the spec has each', () => {
    const { hubApp, payload, template, findings } = rendered({
      source,
      syncOptions: [SyncOption.CREATE_NAMESPACE, SyncOption.RESPECT_IGNORE_DIFFERENCES],
      retry: { limit: 5, backoff: { duration: Duration.seconds(10), factor: 3, maxDuration: Duration.minutes(5) } },
      managedNamespaceMetadata: { labels: { team: 'web' }, annotations: { 'example.com/owner': 'web' } },
      ignoreDifferences: [
        { group: 'apps', kind: 'Deployment', name: 'web', jsonPointers: ['/spec/replicas'] },
        { kind: 'ConfigMap', jqPathExpressions: ['.data["generated"]'], managedFieldsManagers: ['operator'] },
      ],
      info: [
        { name: 'Owner', value: 'team-web' },
        { name: 'Runbook', value: 'https://runbooks.example.com/web' },
      ],
      revisionHistoryLimit: 3,
    });
    expect(findings.errors).toStrictEqual([]);
    const expected = {
      syncPolicy: {
        automated: { prune: true, selfHeal: true },
        syncOptions: ['CreateNamespace=true', 'RespectIgnoreDifferences=true'],
        retry: { limit: 5, backoff: { duration: '10s', factor: 3, maxDuration: '5m' } },
        managedNamespaceMetadata: { labels: { team: 'web' }, annotations: { 'example.com/owner': 'web' } },
      },
      ignoreDifferences: [
        { group: 'apps', kind: 'Deployment', name: 'web', jsonPointers: ['/spec/replicas'] },
        { kind: 'ConfigMap', jqPathExpressions: ['.data["generated"]'], managedFieldsManagers: ['operator'] },
      ],
      info: [
        { name: 'Owner', value: 'team-web' },
        { name: 'Runbook', value: 'https://runbooks.example.com/web' },
      ],
      revisionHistoryLimit: 3,
    };
    for (const spec of [hubApp.spec, payload.spec, template.spec])
      expect({
        syncPolicy: spec.syncPolicy,
        ignoreDifferences: spec.ignoreDifferences,
        info: spec.info,
        revisionHistoryLimit: spec.revisionHistoryLimit,
      }).toStrictEqual(expected);
  });

  test.each([
    [Duration.seconds(5), '5s'],
    [Duration.minutes(3), '3m'],
    [Duration.minutes(90), '1h30m'],
    [Duration.millis(1500), '1.5s'],
    [Duration.millis(500), '500ms'],
    [Duration.hours(2), '2h'],
  ])('GIVEN a backoff of %s THEN Argo CD reads it as %s', (duration, text) => {
    const { hubApp } = rendered({ source, retry: { backoff: { duration, maxDuration: Duration.hours(3) } } });
    expect((hubApp.spec.syncPolicy as { retry: { backoff: { duration: string } } }).retry.backoff.duration).toBe(text);
  });

  test('GIVEN allowEmpty and retry.refresh THEN automated.allowEmpty and retry.refresh; without them nothing changes', () => {
    const { hubApp } = rendered({ source, allowEmpty: true, retry: { limit: 2, refresh: true } });
    expect(hubApp.spec.syncPolicy).toStrictEqual({
      automated: { prune: true, selfHeal: true, allowEmpty: true },
      retry: { limit: 2, refresh: true },
    });
    expect(rendered({ source }).hubApp.spec.syncPolicy).toStrictEqual({ automated: { prune: true, selfHeal: true } });
  });

  test('GIVEN annotations THEN the hub Application, its payload and the ApplicationSet template carry them', () => {
    const annotations = {
      'notifications.argoproj.io/subscribe.on-sync-failed.slack': 'team-web',
      'argocd.argoproj.io/manifest-generate-paths': '.',
    };
    const { hubApp, payload, template, findings } = rendered({ source, annotations });
    expect(findings.errors).toStrictEqual([]);
    for (const meta of [hubApp.metadata, payload.metadata, template.metadata])
      for (const [key, value] of Object.entries(annotations)) expect(meta.annotations?.[key]).toBe(value);
  });

  test('GIVEN SyncOption members THEN the strings Argo CD reads, in the order given, without a warning', () => {
    const { hubApp, findings } = rendered({
      source,
      syncOptions: [
        SyncOption.SERVER_SIDE_APPLY,
        SyncOption.PRUNE_LAST,
        SyncOption.APPLY_OUT_OF_SYNC_ONLY,
        SyncOption.REPLACE,
        SyncOption.FAIL_ON_SHARED_RESOURCE,
        SyncOption.SKIP_DRY_RUN_ON_MISSING_RESOURCE,
        SyncOption.VALIDATE_FALSE,
        SyncOption.prunePropagationPolicy(PrunePropagationPolicy.ORPHAN),
        SyncOption.custom('ClientSideApplyMigration=false'),
      ],
    });
    expect(findings).toStrictEqual({ errors: [], warnings: expect.any(Array) as unknown });
    expect(findings.warnings.filter((w) => w.message.includes('deprecated'))).toStrictEqual([]);
    expect((hubApp.spec.syncPolicy as { syncOptions: string[] }).syncOptions).toStrictEqual([
      'ServerSideApply=true',
      'PruneLast=true',
      'ApplyOutOfSyncOnly=true',
      'Replace=true',
      'FailOnSharedResource=true',
      'SkipDryRunOnMissingResource=true',
      'Validate=false',
      'PrunePropagationPolicy=orphan',
      'ClientSideApplyMigration=false',
    ]);
  });

  test('GIVEN string sync options THEN they render the same bytes and warn once that they are deprecated', () => {
    const strings = rendered({ source, syncOptions: ['ServerSideApply=true', 'CreateNamespace=true'] });
    const members = rendered({ source, syncOptions: [SyncOption.SERVER_SIDE_APPLY, SyncOption.CREATE_NAMESPACE] });
    expect(strings.fleet.renderFiles().get('hub/hub/applications.yaml')).toBe(
      members.fleet.renderFiles().get('hub/hub/applications.yaml'),
    );
    const deprecations = strings.findings.warnings.filter((w) => w.message.includes('deprecated'));
    expect(deprecations.map((w) => w.message)).toStrictEqual([
      "PullAppOptions.syncOptions given as strings is deprecated and goes away in pullfleet 0.3.0: use SyncOption members (SyncOption.SERVER_SIDE_APPLY, ...) or SyncOption.custom('Key=Value') instead (the CHANGELOG has the upgrade steps)",
    ]);
  });

  test('GIVEN maps written in another order THEN the output is byte-identical', () => {
    const a = rendered({
      source: AppSource.kustomize({ repoURL: REPO, path: 'k', commonLabels: { a: '1', b: '2' } }),
      annotations: { 'example.com/x': '1', 'example.com/y': '2' },
      syncOptions: [SyncOption.CREATE_NAMESPACE],
      managedNamespaceMetadata: { labels: { a: '1', b: '2' } },
    });
    const b = rendered({
      source: AppSource.kustomize({ repoURL: REPO, path: 'k', commonLabels: { b: '2', a: '1' } }),
      annotations: { 'example.com/y': '2', 'example.com/x': '1' },
      syncOptions: [SyncOption.CREATE_NAMESPACE],
      managedNamespaceMetadata: { labels: { b: '2', a: '1' } },
    });
    const fa = a.fleet.renderFiles();
    const fb = b.fleet.renderFiles();
    expect([...fa.keys()]).toStrictEqual([...fb.keys()]);
    for (const [file, text] of fa) expect(`${file}\n${fb.get(file)}`).toBe(`${file}\n${text}`);
  });
});

describe('every delivery model', () => {
  test('GIVEN an app on a basic, an agent-managed and an agent-autonomous spoke THEN each Application has the same sources, props and annotations', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const set = new ClusterSet(hub, 'all');
    const spokes = [
      new Spoke(hub, 'basic', { clusterSet: set }),
      new Spoke(hub, 'managed', { clusterSet: set, labels: { model: 'managed' } }),
      new Spoke(hub, 'auto', { clusterSet: set, labels: { model: 'autonomous' } }),
    ];
    GitOpsCluster.ocm(hub, 'managed', {
      placement: new Placement(hub, 'managed', { predicates: [{ labels: { model: 'managed' } }] }),
    });
    GitOpsCluster.ocm(hub, 'autonomous', {
      placement: new Placement(hub, 'autonomous', { predicates: [{ labels: { model: 'autonomous' } }] }),
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: { repoURL: 'https://git.example.com/fleet.git' },
    });
    new PullApplication(hub, 'web', {
      sources: [
        AppSource.helm({ repoURL: CHARTS, chart: 'web', targetRevision: '1.0.0', valueFiles: ['$values/web.yaml'] }),
        AppSource.ref('values', { repoURL: REPO }),
      ],
      destinationNamespace: 'web',
      resources: grants,
      spokes,
      syncOptions: [SyncOption.SERVER_SIDE_APPLY],
      retry: { limit: 2 },
      ignoreDifferences: [{ kind: 'Service', jsonPointers: ['/spec/clusterIP'] }],
      info: [{ name: 'Owner', value: 'web' }],
      revisionHistoryLimit: 4,
      annotations: { 'example.com/owner': 'web' },
    });
    expect(fleet.findings().errors).toStrictEqual([]);
    const apps = [
      find(fleet, 'Application', 'web-basic'),
      find(fleet, 'Application', 'web-managed'),
      find(fleet, 'Application', 'web-auto'),
    ] as AppLike[];
    const shape = (app: AppLike) => ({
      sources: app.spec.sources,
      syncPolicy: app.spec.syncPolicy,
      ignoreDifferences: app.spec.ignoreDifferences,
      info: app.spec.info,
      revisionHistoryLimit: app.spec.revisionHistoryLimit,
      owner: app.metadata.annotations?.['example.com/owner'],
    });
    expect(shape(apps[1])).toStrictEqual(shape(apps[0]));
    expect(shape(apps[2])).toStrictEqual(shape(apps[0]));
    expect(shape(apps[0]).owner).toBe('web');
    expect(shape(apps[0]).revisionHistoryLimit).toBe(4);
  });
});

describe('bad input: one error per problem, naming the field, the value and the fix', () => {
  const source = AppSource.git({ repoURL: REPO, path: 'web' });
  const chart = (extra: object) => AppSource.helm({ repoURL: CHARTS, chart: 'web', targetRevision: '1.0.0', ...extra });

  test.each<[string, Partial<PullAppOptions>, string]>([
    [
      'allowEmpty without automated sync',
      { source, autoSync: false, allowEmpty: true },
      'allowEmpty of app "web" only applies to automated sync',
    ],
    [
      'forceCommonLabels without commonLabels',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', forceCommonLabels: true }) },
      'forceCommonLabels changes how commonLabels is applied, and there is no commonLabels',
    ],
    [
      'labelIncludeTemplates without labelWithoutSelector',
      {
        source: AppSource.kustomize({
          repoURL: REPO,
          path: 'k',
          commonLabels: { a: 'b' },
          labelIncludeTemplates: true,
        }),
      },
      'labelIncludeTemplates puts the labels on pod templates only together with labelWithoutSelector: true',
    ],
    [
      'ignoreMissingComponents without components',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', ignoreMissingComponents: true }) },
      'ignoreMissingComponents changes how components is applied, and there is no components',
    ],
    [
      'a kubeVersion that is not a version',
      { source: chart({ kubeVersion: 'latest' }) },
      'kubeVersion "latest" is not a Kubernetes version',
    ],
    [
      'an apiVersion with spaces',
      { source: chart({ apiVersions: ['apps v1'] }) },
      'apiVersions[0] "apps v1" is not an API version',
    ],
    [
      'a plugin parameter with two values',
      {
        source: AppSource.plugin({ repoURL: REPO, path: 'p', parameters: [{ name: 'x', string: 'a', array: ['b'] }] }),
      },
      'parameters[0] ("x") has string and array: give exactly one of string, array or map',
    ],
    [
      'a plugin parameter without a value',
      { source: AppSource.plugin({ repoURL: REPO, path: 'p', parameters: [{ name: 'x' }] }) },
      'parameters[0] ("x") has no value',
    ],
    [
      'a JSON pointer without "/"',
      { source, ignoreDifferences: [{ kind: 'Deployment', jsonPointers: ['spec/replicas'] }] },
      'ignoreDifferences[0].jsonPointers[0] "spec/replicas" is not a JSON pointer: start it with "/"',
    ],
    [
      'an ignoreDifferences entry that names no field',
      { source, ignoreDifferences: [{ kind: 'Deployment' }] },
      'ignoreDifferences[0] (kind Deployment) names no field: give jsonPointers, jqPathExpressions or managedFieldsManagers',
    ],
    [
      'an ignoreDifferences kind in lower case',
      { source, ignoreDifferences: [{ kind: 'deployment', jsonPointers: ['/spec'] }] },
      'ignoreDifferences[0].kind "deployment" is not a Kubernetes kind',
    ],
    [
      'an ignoreDifferences group with a version',
      { source, ignoreDifferences: [{ group: 'apps/v1', kind: 'Deployment', jsonPointers: ['/spec'] }] },
      'ignoreDifferences[0].group "apps/v1" is not an API group',
    ],
    [
      'a Kustomize image that changes nothing',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', images: ['nginx'] }) },
      'AppSource.kustomize: image "nginx" names neither a tag, a digest nor a new image',
    ],
    [
      'a Kustomize image with white space',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', images: ['nginx: 1.25'] }) },
      'AppSource.kustomize: image "nginx: 1.25" is empty or holds white space',
    ],
    [
      'a Kustomize image with an upper-case name',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', images: ['Nginx:1.25'] }) },
      'AppSource.kustomize: image "Nginx:1.25": "Nginx" is not an image name',
    ],
    [
      'a Kustomize patch with both path and patch',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', patches: [{ path: 'a.yaml', patch: 'x: 1' }] }) },
      'AppSource.kustomize: patches[0] has both path and patch: give exactly one',
    ],
    [
      'a Kustomize patch option Kustomize does not have',
      {
        source: AppSource.kustomize({
          repoURL: REPO,
          path: 'k',
          patches: [{ path: 'a.yaml', options: { force: true } }],
        }),
      },
      'AppSource.kustomize: patches[0].options.force is not a Kustomize patch option',
    ],
    [
      'a negative replica count',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', replicas: [{ name: 'web', count: -1 }] }) },
      'AppSource.kustomize: replicas[0].count -1 is not a whole number of 0 or more',
    ],
    [
      'a Kustomize name prefix with capitals',
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', namePrefix: 'Prod-' }) },
      'AppSource.kustomize: namePrefix "Prod-" would make resource names that are not DNS names',
    ],
    [
      'a Git source without path',
      { source: AppSource.git({ repoURL: REPO } as never) },
      "AppSource.git: path is missing: give the path inside the repository ('.' for its root)",
    ],
    [
      'a Kustomize source without path',
      { source: AppSource.kustomize({ repoURL: REPO } as never) },
      "AppSource.kustomize: path is missing: give the path inside the repository ('.' for its root)",
    ],
    [
      'a Helm release name over 53 characters',
      { source: chart({ releaseName: 'r'.repeat(54) }) },
      `AppSource.helm: releaseName "${'r'.repeat(54)}" is not a Helm release name`,
    ],
    [
      'an oci:// chart without a version',
      {
        source: AppSource.helm({ repoURL: 'oci://ghcr.io/example/charts', chart: 'web' } as Parameters<
          typeof AppSource.helm
        >[0]),
      },
      'AppSource.helm: targetRevision is empty: pin the chart version (the OCI tag)',
    ],
    [
      'a value file leading outside the chart',
      { source: chart({ valueFiles: ['../secrets.yaml'] }) },
      'AppSource.helm: valueFiles[0] "../secrets.yaml" leads outside the chart, which Argo CD refuses',
    ],
    [
      'a value file leading outside the repository of a chart in Git',
      { source: AppSource.helmGit({ repoURL: REPO, path: 'charts/web', valueFiles: ['../../../values.yaml'] }) },
      'AppSource.helmGit: valueFiles[0] "../../../values.yaml" leads outside the repository',
    ],
    [
      'a value file leading outside the repository of its ref source',
      {
        sources: [chart({ valueFiles: ['$values/../x.yaml'] }), AppSource.ref('values', { repoURL: REPO })],
      },
      'AppSource.helm: valueFiles[0] "$values/../x.yaml" leads outside the repository of ref source "values"',
    ],
    [
      'a Helm parameter name with "="',
      { source: chart({ parameters: [{ name: 'image.tag=2', value: '2' }] }) },
      'AppSource.helm: parameters[0].name "image.tag=2" is not a Helm value path',
    ],
    [
      'a Helm parameter given twice',
      {
        source: chart({
          parameters: [
            { name: 'a', value: '1' },
            { name: 'a', value: '2' },
          ],
        }),
      },
      'AppSource.helm: parameters names "a" twice (the last one wins): give each parameter once',
    ],
    ['an empty value file', { source: chart({ valueFiles: [''] }) }, 'AppSource.helm: valueFiles[0] is empty'],
    [
      'Helm version v2',
      { source: chart({ version: 'v2' }) },
      `AppSource.helm: version "v2" is not a Helm version Argo CD renders with: use 'v3'`,
    ],
    [
      'a Helm namespace that is not a DNS label',
      { source: chart({ namespace: 'Web' }) },
      'AppSource.helm: namespace "Web"',
    ],
    [
      'a value file of a ref source with a single source',
      { source: chart({ valueFiles: ['$values/web.yaml'] }) },
      `source of app "web" reads value files from "$values", which only works with several sources: use sources: [<this source>, AppSource.ref('values', { repoURL })]`,
    ],
    [
      'a value file of a ref source the app does not have',
      {
        sources: [chart({ valueFiles: ['$config/web.yaml'] }), AppSource.ref('values', { repoURL: REPO })],
      },
      `sources[0] of app "web" reads value files from "$config", but no source is AppSource.ref('config', ...): add that ref source to sources (the refs are $values)`,
    ],
    [
      'two ref sources of one name',
      {
        sources: [
          chart({ valueFiles: ['$values/web.yaml'] }),
          AppSource.ref('values', { repoURL: REPO }),
          AppSource.ref('values', { repoURL: 'https://git.example.com/other.git' }),
        ],
      },
      'sources of app "web" name the ref "values" twice (sources[1] and sources[2])',
    ],
    [
      'a ref name with a dot',
      { sources: [source, AppSource.ref('my.values', { repoURL: REPO })] },
      'AppSource.ref("my.values"): the name "my.values" is not a ref name',
    ],
    [
      'only ref sources',
      { sources: [AppSource.ref('values', { repoURL: REPO })] },
      'sources of app "web" are all ref sources, which render nothing',
    ],
    [
      'a ref source as the one source',
      { source: AppSource.ref('values', { repoURL: REPO }) },
      'source of app "web" is a ref source, which renders nothing by itself',
    ],
    [
      'both source and sources',
      { source, sources: [source] },
      'app "web" has both source and sources: give one source as source, or every source (ref sources too) in sources',
    ],
    [
      'an empty sources list',
      { sources: [] },
      'sources of app "web" is empty: give at least one source, or use source',
    ],
    [
      'directory options on a chart',
      { source: AppSource.git({ repoURL: REPO, path: 'web', directory: { recurse: true }, values: { a: 1 } }) },
      'AppSource.git: directory cannot go with releaseName or values',
    ],
    [
      'a Jsonnet variable given twice',
      {
        source: AppSource.git({
          repoURL: REPO,
          path: 'web',
          directory: {
            jsonnet: {
              extVars: [
                { name: 'a', value: '1' },
                { name: 'a', value: '2' },
              ],
            },
          },
        }),
      },
      'AppSource.git: directory.jsonnet.extVars names "a" twice',
    ],
    [
      'a plugin env name with a dash',
      { source: AppSource.plugin({ repoURL: REPO, path: 'web', env: { 'MY-VAR': '1' } }) },
      'AppSource.plugin: env name "MY-VAR" is not an environment variable name',
    ],
    [
      'a reserved annotation',
      { source, annotations: { 'argocd.argoproj.io/skip-reconcile': 'false' } },
      'app annotation "argocd.argoproj.io/skip-reconcile" of app "web" is a key pullfleet, OCM or Argo CD sets or acts on itself: remove it',
    ],
    [
      'a pullfleet annotation',
      { source, annotations: { 'pullfleet.io/delivery': 'static' } },
      'app annotation "pullfleet.io/delivery" of app "web" is a key pullfleet, OCM or Argo CD sets or acts on itself',
    ],
    ['an annotation key that is not a key', { source, annotations: { 'a b': '1' } }, 'app annotation key "a b"'],
    [
      'managed namespace metadata without CreateNamespace',
      { source, managedNamespaceMetadata: { labels: { team: 'web' } } },
      'managedNamespaceMetadata of app "web" only applies to a namespace Argo CD creates: add SyncOption.CREATE_NAMESPACE',
    ],
    [
      'a fractional backoff factor',
      { source, retry: { backoff: { factor: 1.5 } } },
      'retry.backoff.factor 1.5 is not a whole number of 1 or more',
    ],
    [
      'a max backoff shorter than the first',
      { source, retry: { backoff: { duration: Duration.minutes(5) } } },
      'retry.backoff.maxDuration (3m) is shorter than duration (5m)',
    ],
    ['a fractional retry limit', { source, retry: { limit: 2.5 } }, 'retry.limit 2.5 is not a whole number'],
    [
      'a negative revision history limit',
      { source, revisionHistoryLimit: -1 },
      'revisionHistoryLimit -1 is not a whole number of 0 or more',
    ],
    ['an info line without name', { source, info: [{ name: ' ', value: 'x' }] }, 'info[0].name is empty'],
    [
      'one sync option set twice',
      { source, syncOptions: [SyncOption.SERVER_SIDE_APPLY, SyncOption.custom('ServerSideApply=false')] },
      'syncOptions of app "web" set ServerSideApply twice ("ServerSideApply=true" and "ServerSideApply=false")',
    ],
    [
      'a custom sync option that is not Key=Value',
      { source, syncOptions: [SyncOption.custom('ServerSideApply')] },
      'SyncOption.custom("ServerSideApply"): a sync option is written "Key=Value"',
    ],
    [
      'a propagation policy that does not exist',
      { source, syncOptions: [SyncOption.prunePropagationPolicy('later' as PrunePropagationPolicy)] },
      'SyncOption.prunePropagationPolicy: "later" is not a propagation policy',
    ],
    [
      'ignoreDifferences that is not a list',
      { source, ignoreDifferences: 'replicas' as never },
      'ignoreDifferences is "replicas" (a string): expected a list',
    ],
    [
      'a retry backoff duration given as a string',
      { source, retry: { backoff: { duration: '5s' as never } } },
      'retry.backoff.duration is "5s" (a string): expected a Duration',
    ],
  ])('fails when given %s', (_, options, fragment) => {
    expectOneError(options, fragment);
  });

  test('fails when a nested value has the wrong type, naming the key and the fix', () => {
    expectOneError(
      { source: AppSource.kustomize({ repoURL: REPO, path: 'k', replicas: [{ name: 'web', count: '3' as never }] }) },
      'AppSource.kustomize: replicas[0].count is "3" (a string): expected a whole number: write 3 (a number, without quotes)',
    );
  });

  test('GIVEN value files in the chart, in Git beside the chart, or over https THEN no problem', () => {
    expect(
      errorsOf({
        source: AppSource.helmGit({
          repoURL: REPO,
          path: 'charts/web',
          valueFiles: [
            'values.yaml',
            '../shared/values.yaml',
            '/environments/prod.yaml',
            'https://cfg.example.com/a.yaml',
          ],
        }),
      }),
    ).toStrictEqual([]);
  });

  test('GIVEN ignoreDifferences with glob group and kind THEN they pass as written (Argo CD matches globs)', () => {
    const { hubApp, findings } = rendered({
      source,
      ignoreDifferences: [{ group: '*', kind: '*', managedFieldsManagers: ['kube-controller-manager'] }],
    });
    expect(findings.errors).toStrictEqual([]);
    expect(hubApp.spec.ignoreDifferences).toStrictEqual([
      { group: '*', kind: '*', managedFieldsManagers: ['kube-controller-manager'] },
    ]);
  });

  test('GIVEN a value file over s3:// THEN a warning naming argocd-cm helm.valuesFileSchemes', () => {
    const { findings } = rendered({ source: chart({ valueFiles: ['s3://bucket/values.yaml'] }) });
    expect(findings.errors).toStrictEqual([]);
    expect(findings.warnings.map((w) => w.message)).toContain(
      'app "web": AppSource.helm: valueFiles[0] "s3://bucket/values.yaml" is a s3:// URL, which Argo CD refuses unless the spoke\'s argocd-cm lists "s3" in helm.valuesFileSchemes (the default is https and http): serve it over https, or keep the file in the repository',
    );
  });

  test('GIVEN a misspelled source prop THEN a warning with a "did you mean", and the prop is ignored', () => {
    const { hubApp, findings } = rendered({
      source: AppSource.kustomize({ repoURL: REPO, path: 'k', imagez: ['nginx:1.25'] } as never),
    });
    expect(findings.warnings.map((w) => w.message)).toContain(
      'app "web": AppSource.kustomize: imagez is not a prop of AppSource.kustomize, so ["nginx:1.25"] is ignored: did you mean images?',
    );
    expect(hubApp.spec.source).toStrictEqual({ repoURL: REPO, path: 'k', targetRevision: 'HEAD', kustomize: {} });
  });
});
