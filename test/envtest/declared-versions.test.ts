/**
 * A fleet that declares the versions it runs (HubProps.versions, ClusterSetProps.spokeVersions,
 * SpokeProps.versions), held against the CRDs of exactly those releases (../shared/upstream-versions) on a
 * real API server: every object synth renders and every payload and work the controller builds for it is
 * server-side applied (dryRun=All, fieldValidation=Strict) against the release of its target. Hub objects go
 * against the hub's Argo CD, OCM cluster manager and ACM; the Applications inside works, and the payload the
 * controller writes for each hub Application (static, and generated from each ApplicationSet for each spoke
 * its placement selects), against the Argo CD of the spoke they go to. A declared release with no folder of
 * its own is checked against the folder of its minor release (the latest patch of it).
 *
 * And what synth refuses for a declared version, the server of that version refuses too: deletionOrder on a
 * hub declaring Argo CD 3.1.16 (before versions were declared, synth rendered it and the hub refused it).
 */
import { join } from 'node:path';
import { expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  DeletionOrder,
  FeedbackScrape,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Rollout,
  Spoke,
} from '../../src/constructs/index.js';
import { ARGOCD_API_VERSION } from '../../src/model/core/keys.js';
import type { Application } from '../../src/model/core/types.js';
import { atLeastVersion, formatVersion, parseVersion } from '../../src/model/core/versions.js';
import { CLUSTER_NAME_PARAM } from '../../src/model/delivery/appset.js';
import {
  buildManifestWork,
  buildPayloadApplication,
  isPullApplication,
  targetCluster,
} from '../../src/model/delivery/manifestwork.js';
import { type Envtest } from '../support/envtest.js';
import { loadKubeConfig, replaceCrd } from '../support/envtest-cluster.js';
import { RawApiError, RawClient, type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { dryRunServer, releaseCrds, releases, UPSTREAM_VERSIONS, type Located } from '../support/version-matrix.js';

const source = (path: string) => AppSource.git({ repoURL: 'https://git.example.com/apps.git', path });
const WAVES = [
  { name: 'canary', labels: { ring: 'canary' } },
  { name: 'rest', rest: true },
];

type Folder = 'argo-cd' | 'ocm' | 'acm';

/** The release folder of `component` a declared version is checked against: its own, else its minor's latest. */
function releaseFolder(component: Folder, declared: string): string {
  const want = parseVersion(declared)!;
  const dir = join(UPSTREAM_VERSIONS, component);
  const sameMinor = releases(dir).filter((r) => {
    const v = parseVersion(r)!;
    return v.major === want.major && v.minor === want.minor;
  });
  const exact = sameMinor.find((r) => parseVersion(r)!.patch === want.patch);
  const folder = exact ?? sameMinor.at(-1);
  if (!folder) throw new Error(`no ${component} CRDs for release ${declared} in ${dir}`);
  return folder;
}

/**
 * The fixture: an OCM hub on Argo CD 3.2.12 and OCM 1.0.0 whose spokes run Argo CD 3.5.1 and klusterlet 1.3
 * unless their set (`legacy`: Argo CD 3.0, klusterlet 1.0) or themselves (`ocp1`: OpenShift 4.16, Argo CD
 * 2.14) say otherwise, with a static app and a waved ApplicationSet deleted in reverse; and an ACM 2.15 hub on
 * Argo CD 3.4.3 (a release that loops on raw specs: the template renders `enabled: false`) and OCM 1.2 with
 * Watch feedback, spokes on Argo CD 3.1, and a GitOpsCluster with the gitops add-on.
 */
function declaredFleet(): { fleet: Fleet; hubs: Hub[] } {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const ocm = new Hub(fleet, 'ocm-hub', {
    versions: { argoCD: '3.2.12', ocm: '1.0.0', spokes: { argoCD: '3.5.1', klusterlet: '1.3.0' } },
  });
  const legacy = new ClusterSet(ocm, 'legacy', { spokeVersions: { argoCD: '3.0', klusterlet: '1.0.0' } });
  const current = new ClusterSet(ocm, 'current');
  const l1 = new Spoke(ocm, 'l1', { clusterSet: legacy, labels: { ring: 'canary' } });
  const l2 = new Spoke(ocm, 'l2', { clusterSet: legacy });
  const c1 = new Spoke(ocm, 'c1', { clusterSet: current });
  const ocp1 = new Spoke(ocm, 'ocp1', { clusterSet: current, versions: { openshift: '4.16', argoCD: '2.14' } });
  new PullApplication(ocm, 'payments', {
    source: source('payments'),
    destinationNamespace: 'payments',
    spokes: [l1, l2, c1, ocp1],
  });
  new PullApplicationSet(ocm, 'podinfo', {
    source: source('podinfo'),
    destinationNamespace: 'podinfo',
    placement: new Placement(ocm, 'all', { clusterSets: [legacy, current] }),
    rollout: Rollout.waves(WAVES, { deletionOrder: DeletionOrder.REVERSE }),
  });

  const acm = new Hub(fleet, 'acm-hub', {
    flavor: HubFlavor.ACM,
    feedbackScrape: FeedbackScrape.WATCH,
    versions: { argoCD: '3.4.3', ocm: '1.2.0', acm: '2.15', spokes: { argoCD: '3.1', klusterlet: '1.2' } },
  });
  const edge = new ClusterSet(acm, 'edge');
  const agents = new ClusterSet(acm, 'agents');
  new Spoke(acm, 'e1', { clusterSet: edge, labels: { ring: 'canary' } });
  new Spoke(acm, 'e2', { clusterSet: edge });
  new Spoke(acm, 'a1', { clusterSet: agents });
  new PullApplicationSet(acm, 'web', {
    source: source('web'),
    destinationNamespace: 'web',
    placement: new Placement(acm, 'edge', { clusterSets: [edge] }),
    rollout: Rollout.waves(WAVES),
    prune: false,
  });
  GitOpsCluster.acm(acm, 'agents-gitops', {
    placement: new Placement(acm, 'agents', { clusterSets: [agents] }),
    gitopsAddon: true,
  });
  return { fleet, hubs: [ocm, acm] };
}

/** An object with the release folder it goes against. */
interface Target extends Located {
  readonly folder: Folder;
  readonly release: string;
}

const ARGO = 'argoproj.io/v1alpha1';
const ACM_GITOPS = 'apps.open-cluster-management.io/v1beta1';
const OCM_GROUPS = ['work.open-cluster-management.io/', 'cluster.open-cluster-management.io/'];

/** Every rendered object, every manifest of its works, and what the controller builds, each with its target release. */
function targets(fleet: Fleet, hubs: readonly Hub[]): Target[] {
  const out: Target[] = [];
  const hubByName = new Map(hubs.map((h) => [h.name, h]));
  const spokeArgo = (hub: Hub, spoke: string) => {
    const declared = hub.spokes.find((s) => s.name === spoke)?.versions.argoCD;
    if (!declared) throw new Error(`spoke ${spoke} of hub ${hub.name} declares no Argo CD version`);
    return releaseFolder('argo-cd', declared);
  };
  const hubTarget = (hub: Hub, object: RawObject): [Folder, string] | undefined => {
    const api = String(object.apiVersion);
    if (api === ARGO) return ['argo-cd', releaseFolder('argo-cd', hub.versions.argoCD!)];
    if (OCM_GROUPS.some((g) => api.startsWith(g))) return ['ocm', releaseFolder('ocm', hub.versions.ocm!)];
    if (api === ACM_GITOPS) return ['acm', releaseFolder('acm', hub.versions.acm!)];
    return undefined;
  };
  for (const [file, list] of fleet.renderObjects()) {
    const hub = hubByName.get(file.split('/')[0])!;
    const bootstrapOf = /\/bootstrap\/([^/]+)\.yaml$/.exec(file)?.[1];
    for (const object of list as RawObject[]) {
      if (bootstrapOf) {
        if (object.apiVersion === ARGO)
          out.push({ object, where: file, folder: 'argo-cd', release: spokeArgo(hub, bootstrapOf) });
        continue;
      }
      const target = hubTarget(hub, object);
      if (target) out.push({ object, where: file, folder: target[0], release: target[1] });
      if (object.kind === 'ManifestWork') {
        const spoke = object.metadata.namespace!;
        const manifests = (object.spec as { workload?: { manifests?: RawObject[] } }).workload?.manifests ?? [];
        for (const m of manifests)
          if (m.apiVersion === ARGO)
            out.push({
              object: m,
              where: `${file} (in work ${spoke}/${object.metadata.name})`,
              folder: 'argo-cd',
              release: spokeArgo(hub, spoke),
            });
      }
      if (object.kind === 'Application' && isPullApplication(object)) {
        const spoke = targetCluster(object)!;
        out.push({
          object: buildPayloadApplication(object as unknown as Application) as unknown as RawObject,
          where: `${file} (the payload the controller writes for ${object.metadata.name})`,
          folder: 'argo-cd',
          release: spokeArgo(hub, spoke),
        });
      }
    }
  }
  // The Applications each ApplicationSet generates for the spokes its placement selects, as the hub's
  // applicationset-controller writes them (3.3+ keeps automated sync with enabled: false on RollingSync apps),
  // and the work and payload the controller builds from each.
  for (const hub of hubs) {
    for (const appSet of hub.node.findAll().filter((c): c is PullApplicationSet => c instanceof PullApplicationSet)) {
      const rendered = appSet.node.tryFindChild('ApplicationSet');
      if (!rendered) continue;
      const json = (rendered as unknown as { toJson(): RawObject }).toJson();
      const spec = json.spec as {
        strategy?: { type?: string };
        template: { metadata: RawObject['metadata']; spec: Application['spec'] };
      };
      for (const spoke of appSet.placement.selectedSpokes()) {
        const generated = JSON.parse(JSON.stringify(spec.template).replaceAll(CLUSTER_NAME_PARAM, spoke.name)) as {
          metadata: RawObject['metadata'];
          spec: Application['spec'];
        };
        const automated = (generated.spec.syncPolicy as { automated?: { enabled?: boolean } } | undefined)?.automated;
        if (
          spec.strategy?.type === 'RollingSync' &&
          automated &&
          automated.enabled !== false &&
          atLeastVersion(parseVersion(hub.versions.argoCD!)!, parseVersion('3.3')!)
        )
          automated.enabled = false;
        const app = {
          apiVersion: ARGOCD_API_VERSION,
          kind: 'Application',
          metadata: {
            ...generated.metadata,
            namespace: hub.argoNamespace,
            ownerReferences: [
              { apiVersion: ARGO, kind: 'ApplicationSet', name: appSet.name, uid: 'appset-uid', controller: true },
            ],
          },
          spec: generated.spec,
        } as unknown as Application;
        const where = `ApplicationSet ${hub.name}/${appSet.name} for spoke ${spoke.name}`;
        out.push({
          object: buildPayloadApplication(app) as unknown as RawObject,
          where: `${where} (payload)`,
          folder: 'argo-cd',
          release: spokeArgo(hub, spoke.name),
        });
        out.push({
          object: buildManifestWork(app, {
            resourceSummary: hub.resourceSummaries,
            ...(hub.workFeedbackScrapeType ? { feedbackScrapeType: hub.workFeedbackScrapeType } : {}),
          }) as unknown as RawObject,
          where: `${where} (work)`,
          folder: 'ocm',
          release: releaseFolder('ocm', hub.versions.ocm!),
        });
      }
    }
  }
  return out;
}

/** Dry-runs each object against the CRDs of its target release; the refusals, each naming release, object and field. */
async function refusals(server: Pick<Envtest, 'kubeconfigPath'>, objects: readonly Target[]): Promise<string[]> {
  const kc = loadKubeConfig(server.kubeconfigPath);
  const client = new RawClient(kc);
  const groups = new Map<string, Target[]>();
  for (const t of objects) {
    const key = `${t.folder}/${t.release}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const refused: string[] = [];
  for (const [key, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    for (const crd of releaseCrds(join(UPSTREAM_VERSIONS, key))) await replaceCrd(kc, crd);
    for (const { object, where } of group) {
      try {
        await client.apply(object, 'pullfleet-test', { dryRun: true });
      } catch (error) {
        const message = error instanceof RawApiError ? error.message : String(error);
        refused.push(
          `${key}: ${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name} from ${where}: ${message}`,
        );
      }
    }
  }
  return refused;
}

describeRealServer('a fleet with declared versions, against the CRDs of those releases', () => {
  const { fleet, hubs } = declaredFleet();
  const objects = targets(fleet, hubs);
  const server = dryRunServer(objects);

  test('the fixture synthesizes, declares several releases of each component, and covers every kind of target', () => {
    expect(fleet.problems()).toStrictEqual([]);
    const releasesOf = (folder: Folder) => [
      ...new Set(objects.filter((t) => t.folder === folder).map((t) => t.release)),
    ];
    expect(releasesOf('argo-cd').sort()).toStrictEqual([
      'v2.14.21',
      'v3.0.23',
      'v3.1.16',
      'v3.2.12',
      'v3.4.7',
      'v3.5.1',
    ]);
    expect(releasesOf('ocm').sort()).toStrictEqual(['v1.0.0', 'v1.2.0']);
    expect(releasesOf('acm')).toStrictEqual(['2.15']);
    const text = (t: Target) => JSON.stringify(t.object);
    // deletionOrder (hub 3.2), enabled: false in a template (hub 3.4.x), conditionRules (OCM 1.0),
    // feedbackScrapeType (OCM 1.2), gitopsAddon (ACM 2.15): each present and going to a release that has it.
    expect(objects.some((t) => text(t).includes('"deletionOrder"') && t.release === 'v3.2.12')).toBe(true);
    expect(objects.some((t) => t.object.kind === 'ApplicationSet' && text(t).includes('"enabled":false'))).toBe(true);
    expect(objects.some((t) => text(t).includes('"conditionRules"') && t.release === 'v1.0.0')).toBe(true);
    expect(objects.some((t) => text(t).includes('"feedbackScrapeType"') && t.release === 'v1.2.0')).toBe(true);
    expect(objects.some((t) => text(t).includes('"gitopsAddon"') && t.release === '2.15')).toBe(true);
    for (const where of ['(payload)', '(work)', '(the payload the controller writes', '(in work '])
      expect(objects.some((t) => t.where.includes(where))).toBe(true);
  });

  test('every object is accepted by the release of its target', async () => {
    expect(await refusals(server, objects)).toStrictEqual([]);
  }, 600_000);

  test('fails at synth for deletionOrder on a hub declaring Argo CD 3.1.16, which the 3.1.16 CRD refuses too', async () => {
    const make = (declare: boolean) => {
      const f = new Fleet({ outdir: '/nonexistent/never-written' });
      const hub = new Hub(f, 'hub', declare ? { versions: { argoCD: '3.1.16' } } : {});
      const set = new ClusterSet(hub, 'prod');
      new Spoke(hub, 'canary', { clusterSet: set, labels: { ring: 'canary' } });
      new Spoke(hub, 'east', { clusterSet: set });
      new PullApplicationSet(hub, 'podinfo', {
        source: source('podinfo'),
        destinationNamespace: 'podinfo',
        placement: new Placement(hub, 'prod', { clusterSets: [set] }),
        rollout: Rollout.waves(WAVES, { deletionOrder: DeletionOrder.REVERSE }),
      });
      return f;
    };
    // Declared: synth refuses it, naming the app, the release and the fix.
    expect(
      make(true)
        .problems()
        .map((p) => `[${p.path}] ${p.message}`),
    ).toStrictEqual([
      expect.stringContaining(
        '[hub/PullApplicationSet:podinfo] PullApplicationSet "podinfo" uses Rollout.waves(..., { deletionOrder })',
      ),
    ]);
    // Undeclared (what every fleet was before): synth renders it, and the hub's 3.1.16 server refuses it.
    const undeclared = make(false);
    const appSet = [...undeclared.renderObjects().values()]
      .flat()
      .find((o) => (o as RawObject).kind === 'ApplicationSet') as unknown as RawObject;
    const refused = await refusals(server, [
      { object: appSet, where: 'undeclared fleet', folder: 'argo-cd', release: releaseFolder('argo-cd', '3.1.16') },
    ]);
    expect(refused).toStrictEqual([expect.stringContaining('.spec.strategy.deletionOrder')]);
    expect(refused[0]).toContain('argo-cd/v3.1.16: ApplicationSet argocd/podinfo');
    expect(formatVersion(parseVersion('v3.1.16')!)).toBe('3.1.16');
  }, 600_000);
});
