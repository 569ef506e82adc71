/**
 * Declared upstream versions (HubProps.versions, SpokeProps.versions, ClusterSetProps.spokeVersions): synth
 * refuses a feature a declared release lacks, with one problem naming the construct, the release and the fix,
 * warns about releases known to mishandle one, and renders what the declared release accepts. Undeclared
 * versions refuse nothing.
 */
import { existsSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { JsonPatch } from 'cdk8s';
import {
  AppSource,
  ClusterSet,
  DeletionOrder,
  DeliveryModel,
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
  type HubProps,
  type PullAppOptions,
} from '../../src/constructs/index.js';
import { testFleet } from '../support/fleet-builder.js';
import { FEATURES } from '../../src/model/core/features.js';
import { parseVersion, versionIn } from '../../src/model/core/versions.js';
import { allObjects, find, synthError } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: 'main' });
const WAVES = [
  { name: 'canary', labels: { ring: 'canary' } },
  { name: 'rest', rest: true },
];

/** A hub with set `prod` (spokes canary, east) and a waved PullApplicationSet `web` on it. */
function wavedFleet(hubProps: HubProps = {}, app: Partial<PullAppOptions> = {}, deletionOrder?: DeletionOrder) {
  const { fleet, hub, sets } = testFleet({
    hub: hubProps,
    sets: ['prod'],
    spokes: [{ name: 'canary', labels: { ring: 'canary' } }, 'east'],
  });
  const prod = sets.prod;
  new PullApplicationSet(hub, 'web', {
    source,
    destinationNamespace: 'web',
    placement: new Placement(hub, 'prod', { clusterSets: [prod] }),
    rollout: Rollout.waves(WAVES, deletionOrder ? { deletionOrder } : {}),
    ...app,
  });
  return { fleet, hub, prod };
}

/** The fleet's warnings about declared versions (other warnings, such as an app without declared resources, are not this test's). */
const warningsOf = (fleet: Fleet) =>
  fleet
    .warnings()
    .map((w) => `[${w.path}] ${w.message}`)
    .filter((w) => / uses |resource summaries off/.test(w));
type AppSet = { spec: { template: { spec: { syncPolicy?: { automated?: Record<string, unknown> } } } } };

describe('declared versions: format', () => {
  test('GIVEN versions written as users write them THEN the hub and spoke keep them canonical', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', {
      flavor: HubFlavor.ACM,
      versions: { argoCD: 'v3.4.7+abc', ocm: ' 1.1 ', acm: '2.15.2', spokes: { klusterlet: 'v1.1.0' } },
    });
    const spoke = new Spoke(hub, 'ocp', { versions: { argoCD: '3.0', openshift: '4.16' } });
    expect(hub.versions).toStrictEqual({
      argoCD: '3.4.7',
      ocm: '1.1',
      acm: '2.15.2',
      spokes: { klusterlet: '1.1.0' },
    });
    expect(spoke.openshift).toBe(true);
    expect(spoke.kubernetesVersion).toBe('1.29');
    expect(spoke.versions).toStrictEqual({ argoCD: '3.0', openshift: '4.16', kubernetes: '1.29', klusterlet: '1.1.0' });
    expect(fleet.problems()).toStrictEqual([]);
  });

  test('fails when a version is not a version, naming the construct, the prop, the value and the form to use', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { versions: { argoCD: 'latest', spokes: { klusterlet: '1.x' } } });
    const set = new ClusterSet(hub, 'edge', { spokeVersions: { kubernetes: 'one-thirty' } });
    new Spoke(hub, 'e1', { clusterSet: set, versions: { openshift: '3.11' } });
    const error = synthError(fleet);
    expect(error).toContain(
      `[hub] versions.argoCD "latest" is not a version: give major.minor, for example '3.4', or major.minor.patch, for example '3.4.7'`,
    );
    expect(error).toContain(`[hub] versions.spokes.klusterlet "1.x" is not a version`);
    expect(error).toContain(`[hub/ClusterSet:edge] spokeVersions.kubernetes "one-thirty" is not a Kubernetes version`);
    expect(error).toContain(`[hub/e1] versions.openshift "3.11" is not an OpenShift 4 release pullfleet knows`);
  });

  test('fails when a version is given as a number (from JSON or any), asking for quotes', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    new Hub(fleet, 'hub', { versions: { argoCD: 3.4 } } as never);
    expect(synthError(fleet)).toContain(
      '[hub] versions.argoCD is 3.4 (a number): expected a string: write it in quotes, "3.4"',
    );
  });

  test('fails when an OCM hub declares an ACM release, or a spoke declares two Kubernetes versions', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { versions: { acm: '2.15' } });
    new Spoke(hub, 'odd', { kubernetesVersion: '1.29', versions: { kubernetes: '1.30' } });
    new Spoke(hub, 'ocp', { versions: { openshift: '4.17', kubernetes: '1.29' } });
    const error = synthError(fleet);
    expect(error).toContain('[hub] versions.acm 2.15 is declared on an OCM hub: set flavor: HubFlavor.ACM');
    expect(error).toContain(
      '[hub/odd] kubernetesVersion 1.29 contradicts versions.kubernetes 1.30: declare the Kubernetes version once',
    );
    expect(error).toContain(
      '[hub/ocp] versions: spoke "ocp" declares OpenShift 4.17, which runs Kubernetes 1.30, but spoke "ocp" declares Kubernetes 1.29',
    );
  });
});

describe('declared versions: where a spoke gets them', () => {
  test('GIVEN hub, cluster set and spoke declarations THEN each component comes from the most specific one', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', {
      versions: { spokes: { argoCD: '3.4', klusterlet: '1.1', openshift: '4.18' } },
    });
    const edge = new ClusterSet(hub, 'edge', { spokeVersions: { argoCD: '3.0' } });
    const plain = new Spoke(hub, 'plain');
    const member = new Spoke(hub, 'member', { clusterSet: edge });
    const own = new Spoke(hub, 'own', { clusterSet: edge, openshift: true, versions: { argoCD: '2.14' } });
    expect(plain.versions).toStrictEqual({ argoCD: '3.4', klusterlet: '1.1' });
    expect(member.versions).toStrictEqual({ argoCD: '3.0', klusterlet: '1.1' });
    expect(own.versions).toStrictEqual({ argoCD: '2.14', klusterlet: '1.1', openshift: '4.18', kubernetes: '1.31' });
    expect(fleet.problems()).toStrictEqual([]);
  });

  test('fails when two cluster sets of a spoke declare different releases, asking to declare it on the spoke', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    new ClusterSet(hub, 'gpu', { matchLabels: { gpu: 'true' }, spokeVersions: { klusterlet: '1.0' } });
    new ClusterSet(hub, 'eu', { matchLabels: { region: 'eu' }, spokeVersions: { klusterlet: '1.2' } });
    new Spoke(hub, 'both', { labels: { gpu: 'true', region: 'eu' } });
    new Spoke(hub, 'decided', { labels: { gpu: 'true', region: 'eu' }, versions: { klusterlet: '1.2' } });
    const problems = fleet.problems().map((p) => `[${p.path}] ${p.message}`);
    expect(problems).toStrictEqual([
      '[hub/both] versions.klusterlet: cluster set "gpu" declares 1.0, cluster set "eu" declares 1.2: declare versions.klusterlet on the spoke itself',
    ]);
  });

  test('GIVEN an OpenShift release on a group THEN its OpenShift spokes below 4.17 get the bootstrap without the guardrail, and other spokes are untouched', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const ocp = new ClusterSet(hub, 'ocp', { spokeVersions: { openshift: '4.16' } });
    const old = new Spoke(hub, 'old', { clusterSet: ocp, openshift: true });
    const kube = new Spoke(hub, 'kube', { clusterSet: ocp });
    const kinds = (spoke: string) =>
      allObjects(fleet)
        .filter(({ file }) => file === `hub/bootstrap/${spoke}.yaml`)
        .map(({ obj }) => obj.kind);
    expect(kinds('old')).not.toContain('ValidatingAdmissionPolicy');
    expect(old.versions).toStrictEqual({ openshift: '4.16', kubernetes: '1.29' });
    expect(kube.versions).toStrictEqual({});
  });
});

describe('declared versions: hub Argo CD and rollout waves', () => {
  test('GIVEN no declared versions THEN deletionOrder and waves synthesize as before (nothing is refused for its version)', () => {
    const { fleet } = wavedFleet({}, {}, DeletionOrder.REVERSE);
    expect(fleet.problems()).toStrictEqual([]);
    expect(warningsOf(fleet)).toStrictEqual([]);
  });

  test('fails when deletionOrder is used on a hub that declares Argo CD 3.1, naming the app, the release and the fix', () => {
    // Before versions were declared, this fleet synthesized and the hub API server refused the ApplicationSet
    // (`.spec.strategy.deletionOrder: field not declared in schema`, test/envtest/argo-versions.test.ts).
    const { fleet } = wavedFleet({ versions: { argoCD: '3.1.16' } }, {}, DeletionOrder.REVERSE);
    expect(fleet.problems().map((p) => `[${p.path}] ${p.message}`)).toStrictEqual([
      `[hub/PullApplicationSet:web] PullApplicationSet "web" uses ${FEATURES.deletionOrder.what}, which needs hub Argo CD 3.2 or later, but hub "hub" declares hub Argo CD 3.1.16: ${FEATURES.deletionOrder.why}. Fix: ${FEATURES.deletionOrder.fix}`,
    ]);
  });

  test('GIVEN waves on a 2.14 hub THEN synth accepts them without a warning (the controller writes back the synced revision 2.x compares)', () => {
    const { fleet } = wavedFleet({ versions: { argoCD: '2.14' } });
    expect(fleet.problems()).toStrictEqual([]);
    expect(warningsOf(fleet)).toStrictEqual([]);
  });

  test('GIVEN a 3.3.0–3.3.6 hub THEN waves warn that a template-only change never syncs', () => {
    const { fleet } = wavedFleet({ versions: { argoCD: '3.3.4' } });
    expect(fleet.problems()).toStrictEqual([]);
    const warnings = warningsOf(fleet);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('[hub/PullApplicationSet:web] PullApplicationSet "web"');
    expect(warnings[0]).toContain('3.3.0–3.3.6 mishandle it: a change of the template alone');
  });

  test('GIVEN a hub that loops on raw specs (3.4.3) and an app with prune THEN synth warns and leaves the template as asked', () => {
    const { fleet } = wavedFleet({ versions: { argoCD: '3.4.3' } });
    const warnings = warningsOf(fleet);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('3.4.0–3.4.6 mishandle it');
    expect(warnings[0]).toContain('#27577');
    const appSet = find(fleet, 'ApplicationSet', 'web') as unknown as AppSet;
    expect(appSet.spec.template.spec.syncPolicy?.automated).toStrictEqual({ prune: true, selfHeal: true });
  });

  test('GIVEN a looping hub (3.3.7, 3.4.3, 3.5.0) and an app without prune THEN the template says enabled: false and synth is quiet', () => {
    for (const argoCD of ['3.3.7', '3.4.3', '3.5.0']) {
      const { fleet } = wavedFleet({ versions: { argoCD } }, { prune: false });
      expect(warningsOf(fleet)).toStrictEqual([]);
      const appSet = find(fleet, 'ApplicationSet', 'web') as unknown as AppSet;
      expect(appSet.spec.template.spec.syncPolicy?.automated).toStrictEqual({
        prune: false,
        selfHeal: true,
        enabled: false,
      });
    }
  });

  test('GIVEN a fixed hub (3.4.7, 3.5.1) or an undeclared one THEN the template is rendered as asked', () => {
    for (const versions of [{ argoCD: '3.4.7' }, { argoCD: 'v3.5.1' }, {}]) {
      const { fleet } = wavedFleet({ versions }, { prune: false });
      expect(warningsOf(fleet)).toStrictEqual([]);
      const appSet = find(fleet, 'ApplicationSet', 'web') as unknown as AppSet;
      expect(appSet.spec.template.spec.syncPolicy?.automated).toStrictEqual({ prune: false, selfHeal: true });
    }
  });

  test('GIVEN a hub declared 3.4 without the patch THEN one warning asks for the patch release', () => {
    const { fleet } = wavedFleet({ versions: { argoCD: '3.4' } });
    const warnings = warningsOf(fleet);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('declares hub Argo CD 3.4 without a patch release, but 3.4.0–3.4.6 mishandle it');
    expect(warnings[0]).toContain("declare the patch release it runs (major.minor.patch, for example '3.4.0')");
  });
});

describe('declared versions: OCM and the klusterlet', () => {
  test('fails when resource summaries are on and the hub declares OCM 0.16; with resourceSummaries: false it synthesizes', () => {
    const on = wavedFleet({ versions: { ocm: '0.16.2' } });
    expect(on.fleet.problems().map((p) => `[${p.path}] ${p.message}`)).toStrictEqual([
      `[hub] hub "hub" uses ${FEATURES.resourceSummaries.what}, which needs OCM cluster manager 1.0 or later, but hub "hub" declares OCM cluster manager 0.16.2: ${FEATURES.resourceSummaries.why}. Fix: ${FEATURES.resourceSummaries.fix}`,
    ]);
    const off = wavedFleet({ versions: { ocm: '0.16.2' }, resourceSummaries: false });
    expect(off.fleet.problems()).toStrictEqual([]);
  });

  test('fails when a spoke group declares klusterlet 0.16 with summaries on, under each spoke, naming the set it came from', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const legacy = new ClusterSet(hub, 'legacy', { spokeVersions: { klusterlet: '0.16' } });
    new Spoke(hub, 'old', { clusterSet: legacy });
    new Spoke(hub, 'upgraded', { clusterSet: legacy, versions: { klusterlet: '1.1' } });
    const problems = fleet.problems().map((p) => `[${p.path}] ${p.message}`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(
      '[hub/old] hub "hub", delivering to spoke "old", uses resource summaries (HubProps.resourceSummaries: condition rules the work agent evaluates), which needs klusterlet 1.0 or later, but spoke "old" (from cluster set "legacy") declares klusterlet 0.16',
    );
  });

  test('GIVEN klusterlet 1.0 spokes and summaries turned off THEN synth warns about the frozen status; with summaries on it is quiet', () => {
    const make = (resourceSummaries: boolean) => {
      const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
      const hub = new Hub(fleet, 'hub', { resourceSummaries, versions: { spokes: { klusterlet: '1.0.0' } } });
      new Spoke(hub, 'e1');
      return fleet;
    };
    expect(warningsOf(make(true))).toStrictEqual([]);
    const warnings = warningsOf(make(false));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('[hub/e1] hub "hub" has resource summaries off, and spoke "e1" (from hub "hub")');
    expect(warnings[0]).toContain('frozen `status.resources`');
  });

  test('fails when FeedbackScrape.WATCH is used on a hub declaring OCM 1.1; warns for a klusterlet 1.1 spoke that would poll', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', {
      feedbackScrape: FeedbackScrape.WATCH,
      versions: { ocm: '1.1', spokes: { klusterlet: '1.1' } },
    });
    new Spoke(hub, 'e1');
    new Spoke(hub, 'e2', { versions: { klusterlet: '1.2' } });
    expect(fleet.problems().map((p) => `[${p.path}] ${p.message}`)).toStrictEqual([
      `[hub] hub "hub" uses ${FEATURES.watchFeedback.what}, which needs OCM cluster manager 1.2 or later, but hub "hub" declares OCM cluster manager 1.1: ${FEATURES.watchFeedback.why}. Fix: ${FEATURES.watchFeedback.fix}`,
    ]);
    const warnings = warningsOf(fleet);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('[hub/e1]');
    expect(warnings[0]).toContain('needs klusterlet 1.2 or later');
  });
});

describe('declared versions: ACM', () => {
  test('fails when a GitOpsCluster asks for the gitops add-on on a hub declaring ACM 2.14; a basic one synthesizes', () => {
    const make = (model: DeliveryModel) => {
      const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
      const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM, versions: { acm: '2.14' } });
      const edge = new ClusterSet(hub, 'edge');
      new Spoke(hub, 'e1', { clusterSet: edge });
      const placement = new Placement(hub, 'edge', { clusterSets: [edge] });
      if (model === DeliveryModel.BASIC) GitOpsCluster.acm(hub, 'edge-gitops', { placement, model });
      else
        GitOpsCluster.acm(hub, 'edge-gitops', {
          placement,
          model: DeliveryModel.AGENT_MANAGED,
          principalServerAddress: 'principal.example.com',
          principalServerPort: 443,
        });
      return fleet;
    };
    expect(
      make(DeliveryModel.AGENT_MANAGED)
        .problems()
        .map((p) => `[${p.path}] ${p.message}`),
    ).toStrictEqual([
      `[hub/GitOpsCluster:edge-gitops] GitOpsCluster "edge-gitops" uses ${FEATURES.gitopsAddon.what}, which needs ACM 2.15 or later, but hub "hub" declares ACM 2.14: ${FEATURES.gitopsAddon.why}. Fix: ${FEATURES.gitopsAddon.fix}`,
    ]);
    expect(make(DeliveryModel.BASIC).problems()).toStrictEqual([]);
  });
});

describe('declared versions: hub Argo CD and the Application spec', () => {
  test('fails when an ApplicationSet template carries a field the hub Argo CD lacks (here through an escape hatch)', () => {
    const { fleet } = wavedFleet({ versions: { argoCD: '3.1.16' } });
    const appSet = fleet.node.findAll().find((c): c is PullApplicationSet => c instanceof PullApplicationSet)!;
    appSet.applicationSet!.addJsonPatch(
      JsonPatch.add('/spec/template/spec/syncPolicy/retry', { limit: 2, refresh: true }),
    );
    expect(fleet.problems().map((p) => `[${p.path}] ${p.message}`)).toStrictEqual([
      expect.stringContaining(
        '[hub/PullApplicationSet:web] ApplicationSet web renders spec.template.spec.syncPolicy.retry.refresh (syncPolicy.retry.refresh), which needs hub Argo CD 3.2 or later, but hub "hub" declares Argo CD 3.1.16: the hub refuses it.',
      ),
    ]);
  });
});

describe('declared versions: spoke Argo CD', () => {
  test('fails when an app delivers a spec field the spokes of a set declaring Argo CD 3.0 lack, once per app and release, listing the spokes', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { versions: { spokes: { argoCD: '3.1' } } });
    const legacy = new ClusterSet(hub, 'legacy', { spokeVersions: { argoCD: '3.0' } });
    const current = new ClusterSet(hub, 'current');
    const spokes = [
      new Spoke(hub, 'l1', { clusterSet: legacy }),
      new Spoke(hub, 'l2', { clusterSet: legacy }),
      new Spoke(hub, 'c1', { clusterSet: current }),
    ];
    const oci = AppSource.helm({ repoURL: 'oci://registry.example.com/charts', chart: 'web', targetRevision: '1.0.0' });
    new PullApplication(hub, 'static-web', { source: oci, destinationNamespace: 'web', spokes });
    new PullApplicationSet(hub, 'dynamic-web', {
      source: oci,
      destinationNamespace: 'web',
      placement: new Placement(hub, 'all', { clusterSets: [legacy, current] }),
    });
    expect(fleet.problems().map((p) => `[${p.path}] ${p.message}`)).toStrictEqual([
      expect.stringMatching(
        /^\[hub\/PullApplication:static-web\] PullApplication "static-web" delivers spec\.source\.repoURL \(an oci:\/\/ repoURL.*\), which needs spoke Argo CD 3\.1 or later, but spokes l1, l2 declare Argo CD 3\.0: /,
      ),
      expect.stringMatching(
        /^\[hub\/PullApplicationSet:dynamic-web\] PullApplicationSet "dynamic-web" delivers spec\.source\.repoURL .*but spokes l1, l2 declare Argo CD 3\.0: /,
      ),
    ]);
  });
});

describe('the feature table', () => {
  test('every row names its component, a parseable minimum and ranges, and at least one test that holds it', () => {
    for (const [id, row] of Object.entries(FEATURES)) {
      expect([id, row.heldBy.length > 0]).toStrictEqual([id, true]);
      for (const file of row.heldBy) expect([id, file, existsSync(file)]).toStrictEqual([id, file, true]);
      if ('since' in row) expect([id, parseVersion(row.since) !== undefined]).toStrictEqual([id, true]);
      for (const range of 'broken' in row ? row.broken : []) {
        const from = parseVersion(range.from)!;
        expect(versionIn(parseVersion(range.to)!, from)).toBe('yes');
      }
    }
  });
});
