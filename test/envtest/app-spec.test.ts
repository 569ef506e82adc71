/**
 * The whole Application spec (issue 28) on a real API server: a fleet using every source type (Git directory
 * with Jsonnet, Kustomize, Helm from a chart repository, from an OCI registry in both forms and from Git, a
 * plugin, several sources with a ref source) and every app prop (sync options, retry, managed namespace
 * metadata, ignoreDifferences, annotations, info, revisionHistoryLimit) renders hub Applications, the
 * Applications inside their ManifestWorks and an ApplicationSet. Each is server-side applied (dry run, strict
 * field validation) against the Argo CD CRDs of every release users run (2.14 to 3.5) that has every feature
 * the object uses, by `argoSpecRequirements`; a release that lacks one must refuse or ignore nothing the table
 * does not explain (a value-selected behaviour such as an oci:// repoURL is not a schema field, so older CRDs
 * accept it: the table, not the server, stops it).
 */
import { join } from 'node:path';
import { expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PrunePropagationPolicy,
  PullApplication,
  PullApplicationSet,
  Spoke,
  SyncOption,
  type PullAppOptions,
} from '../../src/constructs/index.js';
import { argoSpecUnsupported } from '../../src/model/core/argo-spec-features.js';
import type { JsonObject } from '../../src/model/core/types.js';
import { loadKubeConfig, replaceCrd } from '../support/envtest-cluster.js';
import { RawApiError, RawClient, type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { dryRunServer, releaseCrds, releases, UPSTREAM_VERSIONS, type Located } from '../support/version-matrix.js';

const RELEASES = join(UPSTREAM_VERSIONS, 'argo-cd');
const ARGO = 'argoproj.io/v1alpha1';
const REPO = 'https://git.example.com/platform/apps.git';
const CHARTS = 'https://charts.example.com';
const grants = [{ apiGroup: 'apps', resources: ['deployments'] }];

/** One app per source type, one with every app prop, and an ApplicationSet with several sources. */
function fixtureObjects(): Located[] {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub');
  const set = new ClusterSet(hub, 'prod');
  const east = new Spoke(hub, 'east', { clusterSet: set });
  const apps: Record<string, Partial<PullAppOptions>> = {
    jsonnet: {
      source: AppSource.git({
        repoURL: REPO,
        path: 'jsonnet',
        directory: {
          recurse: true,
          include: '*.jsonnet',
          exclude: 'test-*',
          jsonnet: {
            extVars: [{ name: 'env', value: 'prod' }],
            tlas: [{ name: 'replicas', value: '3', code: true }],
            libs: ['vendor'],
          },
        },
      }),
    },
    kustomize: {
      source: AppSource.kustomize({
        repoURL: REPO,
        path: 'overlays/prod',
        images: ['nginx:1.25', 'web=registry.example.com/web:2.0'],
        namePrefix: 'prod-',
        nameSuffix: '-a',
        commonLabels: { team: 'web' },
        commonAnnotations: { 'example.com/owner': 'web' },
        namespace: 'kustomize',
        replicas: [{ name: 'web', count: 2 }],
        patches: [
          { path: 'patches/limits.yaml' },
          {
            patch: '- op: replace\n  path: /spec/replicas\n  value: 2\n',
            target: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'web', labelSelector: 'app=web' },
            options: { allowNameChange: true },
          },
        ],
        components: ['../../components/monitoring'],
        version: 'v5.4.3',
        forceCommonLabels: true,
        labelWithoutSelector: true,
        forceCommonAnnotations: true,
        commonAnnotationsEnvsubst: true,
        kubeVersion: '1.30',
        apiVersions: ['monitoring.coreos.com/v1/ServiceMonitor'],
      }),
    },
    // The Kustomize options Argo CD 3.0 added.
    'kustomize-30': {
      source: AppSource.kustomize({
        repoURL: REPO,
        path: 'overlays/prod',
        commonLabels: { team: 'web' },
        labelWithoutSelector: true,
        labelIncludeTemplates: true,
        components: ['../../components/monitoring'],
        ignoreMissingComponents: true,
      }),
    },
    chart: {
      source: AppSource.helm({
        repoURL: CHARTS,
        chart: 'web',
        targetRevision: '1.2.3',
        valueFiles: ['values-prod.yaml'],
        ignoreMissingValueFiles: true,
        parameters: [{ name: 'image.tag', value: '2.0', forceString: true }],
        fileParameters: [{ name: 'config', path: 'files/config.json' }],
        values: { replicas: 3, resources: null },
        skipCrds: true,
        skipSchemaValidation: true,
        releaseName: 'web',
        namespace: 'chart',
        version: 'v3',
        passCredentials: true,
        skipTests: true,
        kubeVersion: 'v1.30.2',
        apiVersions: ['apps/v1'],
      }),
    },
    'oci-plain': {
      source: AppSource.helm({
        repoURL: 'registry-1.docker.io/bitnamicharts',
        chart: 'nginx',
        targetRevision: '15.9.0',
      }),
    },
    'oci-scheme': {
      source: AppSource.helm({ repoURL: 'oci://ghcr.io/example/charts', chart: 'web', targetRevision: '1.0.0' }),
    },
    'chart-git': {
      source: AppSource.helmGit({ repoURL: REPO, path: 'charts/web', valueFiles: ['values-prod.yaml'] }),
    },
    plugin: {
      source: AppSource.plugin({
        repoURL: REPO,
        path: 'plugin',
        name: 'avp-v1.0',
        env: { ENVIRONMENT: 'prod' },
        parameters: [
          { name: 'replicas', string: '3' },
          { name: 'regions', array: ['eu'] },
          { name: 'labels', map: { tier: 'web' } },
        ],
      }),
    },
    multi: {
      sources: [
        AppSource.helm({
          repoURL: CHARTS,
          chart: 'web',
          targetRevision: '1.2.3',
          valueFiles: ['$values/web/prod.yaml'],
        }),
        AppSource.ref('values', { repoURL: REPO, targetRevision: 'main' }),
        AppSource.git({ repoURL: REPO, path: 'extra' }),
      ],
    },
    props: {
      source: AppSource.git({ repoURL: REPO, path: 'props' }),
      syncOptions: [
        SyncOption.SERVER_SIDE_APPLY,
        SyncOption.CREATE_NAMESPACE,
        SyncOption.PRUNE_LAST,
        SyncOption.APPLY_OUT_OF_SYNC_ONLY,
        SyncOption.RESPECT_IGNORE_DIFFERENCES,
        SyncOption.FAIL_ON_SHARED_RESOURCE,
        SyncOption.SKIP_DRY_RUN_ON_MISSING_RESOURCE,
        SyncOption.VALIDATE_FALSE,
        SyncOption.prunePropagationPolicy(PrunePropagationPolicy.BACKGROUND),
      ],
      retry: { limit: 5, backoff: { duration: Duration.seconds(5), factor: 2, maxDuration: Duration.minutes(3) } },
      managedNamespaceMetadata: { labels: { team: 'web' }, annotations: { 'example.com/owner': 'web' } },
      ignoreDifferences: [
        { group: 'apps', kind: 'Deployment', name: 'web', namespace: 'props', jsonPointers: ['/spec/replicas'] },
        { kind: 'ConfigMap', jqPathExpressions: ['.data.generated'], managedFieldsManagers: ['operator'] },
      ],
      annotations: { 'notifications.argoproj.io/subscribe.on-sync-failed.slack': 'web' },
      info: [{ name: 'Owner', value: 'team-web' }],
      revisionHistoryLimit: 3,
      allowEmpty: true,
    },
    // A retry that syncs the latest revision: Argo CD 3.2 added it.
    'props-32': {
      source: AppSource.git({ repoURL: REPO, path: 'props' }),
      retry: { limit: 2, refresh: true },
    },
  };
  for (const [name, props] of Object.entries(apps))
    new PullApplication(hub, name, {
      destinationNamespace: name,
      resources: grants,
      spokes: [east],
      ...props,
    });
  new PullApplicationSet(hub, 'multi-set', {
    ...(apps.multi as PullAppOptions),
    ...apps.props,
    source: undefined,
    destinationNamespace: 'multi-set',
    resources: grants,
    placement: new Placement(hub, 'all', { clusterSets: [set] }),
  });
  const out: Located[] = [];
  for (const [file, list] of fleet.renderObjects())
    for (const object of list as RawObject[]) {
      if (object.apiVersion === ARGO && object.kind !== 'AppProject') out.push({ object, where: file });
      if (object.kind === 'ManifestWork')
        for (const m of (object.spec as { workload: { manifests: RawObject[] } }).workload.manifests)
          if (m.kind === 'Application') out.push({ object: m, where: `${file} (in work ${object.metadata.name})` });
    }
  return out;
}

/** The Application spec an object carries (an Application's, or an ApplicationSet's template's). */
function appSpec(object: RawObject): JsonObject {
  const spec = object.spec as JsonObject & { template?: { spec: JsonObject } };
  return object.kind === 'ApplicationSet' ? spec.template!.spec : spec;
}

describeRealServer('the whole Application spec against every Argo CD release', () => {
  const objects = fixtureObjects();
  const server = dryRunServer(objects);

  test('the fixture covers every source type and every prop, as hub apps, spoke apps and a template', () => {
    const text = JSON.stringify(objects.map((o) => o.object));
    for (const key of [
      '"directory"',
      '"jsonnet"',
      '"kustomize"',
      '"chart"',
      '"oci://',
      '"plugin"',
      '"ref"',
      '"sources"',
      '"retry"',
      '"managedNamespaceMetadata"',
      '"ignoreDifferences"',
      '"info"',
      '"revisionHistoryLimit"',
      '"notifications.argoproj.io/subscribe.on-sync-failed.slack"',
    ])
      expect(text).toContain(key);
    const where = new Set(objects.map((o) => `${o.object.kind}${o.where.includes('(in work') ? ' spoke' : ''}`));
    expect([...where].sort()).toStrictEqual(['Application', 'Application spoke', 'ApplicationSet']);
  });

  test('each release accepts every object whose features it has', async () => {
    const kc = loadKubeConfig(server.kubeconfigPath);
    const client = new RawClient(kc);
    const refused: string[] = [];
    const applied: Record<string, number> = {};
    for (const release of releases(RELEASES)) {
      for (const crd of releaseCrds(join(RELEASES, release))) await replaceCrd(kc, crd);
      applied[release] = 0;
      for (const { object, where } of objects) {
        if (argoSpecUnsupported(appSpec(object), release).length > 0) continue;
        try {
          await client.apply(object, 'pullfleet-test', { dryRun: true });
          applied[release]++;
        } catch (error) {
          const message = error instanceof RawApiError ? error.message : String(error);
          refused.push(`${release}: ${object.kind} ${object.metadata.name} from ${where}: ${message}`);
        }
      }
    }
    expect(refused).toStrictEqual([]);
    // 2.14 skips the apps using 3.0's Kustomize options, the oci:// app and the 3.2 retry (a hub app and a payload
    // each), 3.0 the oci:// app and the 3.2 retry; from 3.2 on every object is applied.
    const counts = Object.values(applied);
    expect(counts[0]).toBe(objects.length - 6);
    expect(counts[1]).toBe(objects.length - 4);
    expect(counts.at(-1)).toBe(objects.length);
  }, 600_000);
});
