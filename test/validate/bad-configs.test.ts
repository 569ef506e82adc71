/**
 * A table of bad fleets, each built in-process on a small valid base and synthesized for real into a
 * temporary output folder that already holds a previous good output: every case must fail with its
 * message fragment (construct path, value, fix) and leave that folder byte for byte as it was.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Construct } from 'constructs';
import {
  AppSource,
  ClusterSet,
  Fleet,
  GitOpsCluster,
  Hub,
  Inventory,
  Placement,
  Prioritizer,
  PrioritizerMode,
  PullApplication,
  PullApplicationSet,
  SelectorOperator,
  Spoke,
  TaintEffect,
  TolerationOperator,
  type HubProps,
} from '../../src/constructs/index.js';
import { FleetValidationError } from '../../src/model/validation/rules.js';

interface Base {
  fleet: Fleet;
  hub: Hub;
  prod: ClusterSet;
  east: Spoke;
  west: Spoke;
  all: Placement;
}

const git = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });

/** A valid fleet: one hub, set `prod` with spokes east and west, placement `all`, app `base`. */
function base(outdir: string, options: { hub?: HubProps; strict?: boolean } = {}): Base {
  const fleet = new Fleet({ outdir, strict: options.strict, onProgress: () => undefined });
  const hub = new Hub(fleet, 'hub', { controller: { enabled: false }, ...options.hub });
  const prod = new ClusterSet(hub, 'prod');
  const east = new Spoke(hub, 'east', { clusterSet: prod, labels: { region: 'us-east' } });
  const west = new Spoke(hub, 'west', { clusterSet: prod, labels: { region: 'us-west' } });
  const all = new Placement(hub, 'all', { clusterSets: [prod] });
  new PullApplication(hub, 'base', { source: git, destinationNamespace: 'base', placement: all });
  return { fleet, hub, prod, east, west, all };
}

type Case = [name: string, build: (b: Base) => void, fragment: string, options?: { hub?: HubProps; strict?: boolean }];

/** An inventory of one cluster, `north`, for the override cases. */
const inventory = Inventory.fromText(
  'apiVersion: pullfleet.io/v1alpha1\nkind: Inventory\nhub: hub\nclusterSets: []\nclusters:\n  - name: north\n    labels: { region: north }\n',
  'inventory/hub.yaml',
);

const huge = (bytes: number) => ({ blob: 'x'.repeat(bytes) });

const cases: Case[] = [
  [
    'an invalid label key on an app',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        labels: { 'Team Name': 'a' },
      }),
    '[hub/PullApplication:web] app label key "Team Name" must be an optional DNS-subdomain prefix',
  ],
  [
    'a `bad key!` label key on a spoke',
    ({ hub }) => new Spoke(hub, 'north', { labels: { 'bad key!': 'x' } }),
    '[hub/north] spoke label key "bad key!"',
  ],
  [
    'a label key with two slashes',
    ({ hub }) => new Spoke(hub, 'north', { labels: { 'a/b/c': 'x' } }),
    'spoke label key "a/b/c" has more than one "/"',
  ],
  [
    'a label key prefix that is not a DNS subdomain',
    ({ hub }) => new Spoke(hub, 'north', { labels: { 'Example.COM/team': 'x' } }),
    'has a prefix "Example.COM" that must consist of lower-case letters',
  ],
  [
    'a label key name over 63 characters',
    ({ hub }) => new Spoke(hub, 'north', { labels: { [`k${'x'.repeat(63)}`]: 'x' } }),
    'has a name part of 64 characters; the limit is 63',
  ],
  [
    'a label value with a space',
    ({ hub }) => new Spoke(hub, 'north', { labels: { team: 'a b' } }),
    '[hub/north] spoke label team="a b" must consist of letters',
  ],
  [
    'an app label value over 63 characters',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        labels: { team: 'x'.repeat(64) },
      }),
    'is 64 characters long; the limit is 63',
  ],
  [
    'prioritizer weight 99',
    ({ hub, prod }) =>
      new Placement(hub, 'p', {
        clusterSets: [prod],
        numberOfClusters: 1,
        prioritizers: [Prioritizer.builtIn('Steady', 99)],
      }),
    '[hub/Placement:p] Placement argocd/p: spec.prioritizerPolicy.configurations[0].weight is 99, which must be <= 10',
  ],
  [
    'prioritizer weight -11',
    ({ hub, prod }) =>
      new Placement(hub, 'p', { clusterSets: [prod], prioritizers: [Prioritizer.builtIn('Steady', -11)] }),
    'weight is -11, which must be >= -10',
  ],
  [
    'an unknown built-in prioritizer',
    ({ hub, prod }) => new Placement(hub, 'p', { clusterSets: [prod], prioritizers: [Prioritizer.builtIn('Fastest')] }),
    'built-in prioritizer "Fastest" does not exist: use one of Balance, Steady',
  ],
  [
    'an unknown prioritizer mode',
    ({ hub, prod }) =>
      new Placement(hub, 'p', { clusterSets: [prod], prioritizerMode: 'Sometimes' as PrioritizerMode }),
    'spec.prioritizerPolicy.mode "Sometimes" is not Additive or Exact',
  ],
  [
    'selector operator `Equals`',
    ({ hub, prod }) =>
      new Placement(hub, 'p', {
        clusterSets: [prod],
        predicates: [{ labelExpressions: [{ key: 'region', operator: 'Equals' as never, values: ['us-east'] }] }],
      }),
    'spec.predicates[0].labelSelector matchExpressions[0] operator "Equals" is not a selector operator: use one of In, NotIn, Exists, DoesNotExist',
  ],
  [
    'claim selector operator `Equals`',
    ({ hub, prod }) =>
      new Placement(hub, 'p', {
        clusterSets: [prod],
        predicates: [{ claimExpressions: [{ key: 'platform', operator: 'Equals' as never, values: ['aws'] }] }],
      }),
    'spec.predicates[0].claimSelector matchExpressions[0] operator "Equals" is not a selector operator',
  ],
  [
    'operator In without values',
    ({ hub, prod }) =>
      new Placement(hub, 'p', {
        clusterSets: [prod],
        predicates: [{ labelExpressions: [{ key: 'region', operator: SelectorOperator.IN }] }],
      }),
    'operator In on "region" has no values: give at least one value, or use Exists',
  ],
  [
    'operator Exists with values',
    ({ hub, prod }) =>
      new Placement(hub, 'p', {
        clusterSets: [prod],
        predicates: [{ labelExpressions: [{ key: 'region', operator: SelectorOperator.EXISTS, values: ['x'] }] }],
      }),
    'operator Exists on "region" takes no values but has ["x"]',
  ],
  [
    'a selector label key with a space',
    ({ hub, prod }) => new Placement(hub, 'p', { clusterSets: [prod], predicates: [{ labels: { 'my region': 'x' } }] }),
    'spec.predicates[0].labelSelector matchLabels key "my region"',
  ],
  [
    'a toleration operator `Equals`',
    ({ hub, prod }) =>
      new Placement(hub, 'p', {
        clusterSets: [prod],
        tolerations: [{ key: 'gpu', operator: 'Equals' as never, value: 'x' }],
      }),
    'spec.tolerations[0] operator "Equals" is not a toleration operator: use Equal or Exists',
  ],
  [
    'a toleration effect `NoSchedule`',
    ({ hub, prod }) =>
      new Placement(hub, 'p', {
        clusterSets: [prod],
        tolerations: [{ key: 'gpu', operator: TolerationOperator.EXISTS, effect: 'NoSchedule' as never }],
      }),
    'spec.tolerations[0].effect is "NoSchedule", which must be one of "NoSelect", "PreferNoSelect", "NoSelectIfNew"',
  ],
  [
    'a spoke taint effect `NoSchedule`',
    ({ hub }) => new Spoke(hub, 'north', { taints: [{ key: 'gpu', effect: 'NoSchedule' as never }] }),
    '[hub/north] taints[0] effect "NoSchedule" is not an OCM taint effect: use one of NoSelect, PreferNoSelect, NoSelectIfNew',
  ],
  [
    'a spoke taint key with a space',
    ({ hub }) => new Spoke(hub, 'north', { taints: [{ key: 'g p u', effect: TaintEffect.NO_SELECT }] }),
    '[hub/north] taints[0] key "g p u"',
  ],
  [
    'numberOfClusters < 0',
    ({ hub, prod }) => new Placement(hub, 'p', { clusterSets: [prod], numberOfClusters: -1 }),
    '[hub/Placement:p] numberOfClusters -1 must be a whole number >= 0',
  ],
  [
    'an RBAC apiGroup `Apps Group` (reported under the app)',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [{ apiGroup: 'Apps Group', resources: ['deployments'] }],
      }),
    '[hub/PullApplication:web] resources grant API group "Apps Group" must consist of lower-case letters',
  ],
  [
    'an RBAC resource that is not a resource name (reported under the app)',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [{ apiGroup: 'apps', resources: ['Deployments'] }],
      }),
    '[hub/PullApplication:web] resources grant for API group "apps" names "Deployments", which is not a resource of that group: did you mean "deployments"?',
  ],
  [
    'a wildcard RBAC resource',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [{ apiGroup: 'apps', resources: ['*'] }],
      }),
    '[hub/PullApplication:web] resources grant for API group "apps" lists ["*"]: name each resource',
  ],
  [
    'a wildcard RBAC API group',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [{ apiGroup: '*', resources: ['deployments'] }],
      }),
    '[hub/PullApplication:web] resources grant API group "*" is not allowed',
  ],
  [
    'an empty resources grant',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [{ apiGroup: 'apps', resources: [] }],
      }),
    'lists []: name each resource',
  ],
  [
    'a grant kind that is not a kind',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [
          {
            apiGroup: 'rbac.authorization.k8s.io',
            resources: ['clusterroles'],
            clusterScoped: true,
            kinds: ['clusterroles'],
          },
        ],
      }),
    'kind "clusterroles" of the grant',
  ],
  [
    'an empty Helm targetRevision',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.helm({ repoURL: 'https://charts.example.com', chart: 'web', targetRevision: '' }),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    'spec.source.targetRevision of chart "web" is empty: pin a chart version',
  ],
  [
    'an empty Helm targetRevision on an ApplicationSet',
    ({ hub, all }) =>
      new PullApplicationSet(hub, 'web', {
        source: AppSource.helm({ repoURL: 'https://charts.example.com', chart: 'web', targetRevision: ' ' }),
        destinationNamespace: 'web',
        placement: all,
      }),
    '[hub/PullApplicationSet:web] ApplicationSet argocd/web: spec.template.spec.source.targetRevision of chart "web" is empty',
  ],
  [
    'a repoURL that is not a URL',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.git({ repoURL: 'not-a-url', path: 'web' }),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    'spec.source.repoURL "not-a-url" is not a URL: give the Git repository',
  ],
  [
    'a Helm repoURL with an ftp scheme',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.helm({ repoURL: 'ftp://charts.example.com', chart: 'web', targetRevision: '1.0.0' }),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    'repoURL "ftp://charts.example.com" has the scheme "ftp:"',
  ],
  [
    'garbage syncOptions',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        syncOptions: ['please sync'],
      }),
    'sync option "please sync" is not an Argo CD sync option',
  ],
  [
    'a sync option with a wrong value',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        syncOptions: ['ServerSideApply=yes'],
      }),
    'sync option "ServerSideApply=yes" needs one of the values true, false',
  ],
  [
    'a 2 MiB ApplicationSet',
    ({ hub, all }) =>
      new PullApplicationSet(hub, 'web', {
        source: AppSource.helm({
          repoURL: 'https://charts.example.com',
          chart: 'web',
          targetRevision: '1.0.0',
          values: huge(2 * 1024 * 1024),
        }),
        destinationNamespace: 'web',
        placement: all,
      }),
    'over the etcd object limit of 1572864 bytes',
  ],
  [
    'an ApplicationSet over the size budget',
    ({ hub, all }) =>
      new PullApplicationSet(hub, 'web', {
        source: AppSource.helm({
          repoURL: 'https://charts.example.com',
          chart: 'web',
          targetRevision: '1.0.0',
          values: huge(600 * 1024),
        }),
        destinationNamespace: 'web',
        placement: all,
      }),
    'over the size budget of 512000 bytes',
  ],
  [
    'a work over a small budget',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.helm({
          repoURL: 'https://charts.example.com',
          chart: 'web',
          targetRevision: '1.0.0',
          values: huge(5000),
        }),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    'over the size budget of 4000 bytes',
    { hub: { workSizeBudget: 4000 } },
  ],
  [
    'a workSizeBudget above the etcd limit',
    () => undefined,
    '[hub] workSizeBudget 2000000 must be a number of bytes above 0 and at most 1572864',
    { hub: { workSizeBudget: 2_000_000 } },
  ],
  [
    'two spokes with one id',
    ({ hub }) => new Spoke(hub, 'east'),
    '[hub/east] "hub" already has a Spoke with the id "east" (hub/east): give each Spoke its own name',
  ],
  [
    'two spokes with one name in different scopes',
    ({ hub }) => new Spoke(new Construct(hub, 'more'), 'east'),
    '[hub/more/east] hub "hub" already has a spoke named "east" (hub/east)',
  ],
  [
    'two cluster sets with one id',
    ({ hub }) => new ClusterSet(hub, 'prod'),
    '"hub" already has a ClusterSet with the id "prod"',
  ],
  [
    'two placements with one id',
    ({ hub }) => new Placement(hub, 'all'),
    '"hub" already has a Placement with the id "all"',
  ],
  [
    'two apps with one id',
    ({ hub, east }) => new PullApplication(hub, 'base', { source: git, destinationNamespace: 'web', spokes: [east] }),
    '"hub" already has a PullApplication with the id "base"',
  ],
  [
    'two hubs with one id',
    ({ fleet }) => new Hub(fleet, 'hub', { controller: { enabled: false } }),
    'the fleet already has a Hub with the id "hub"',
  ],
  [
    'two apps rendering one hub Application',
    ({ hub, east }) =>
      new PullApplication(hub, 'web2', { name: 'base', source: git, destinationNamespace: 'web', spokes: [east] }),
    'Application "argocd/base-east" collides with the one made by',
  ],
  [
    'an empty Git repoURL',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.git({ repoURL: '', path: 'web' }),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    '[hub/PullApplication:web] app "web": AppSource.git: repoURL is empty: give the Git repository URL',
  ],
  [
    'an empty Helm chart',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.helm({ repoURL: 'https://charts.example.com', chart: '', targetRevision: '1.0.0' }),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    '[hub/PullApplication:web] app "web": AppSource.helm: chart is empty: give the chart name',
  ],
  [
    'a missing source',
    ({ hub, east }) => new PullApplication(hub, 'web', { destinationNamespace: 'web', spokes: [east] }),
    '[hub/PullApplication:web] source is missing: give the app a source',
  ],
  [
    'an ApplicationSet without a placement',
    ({ hub }) => new PullApplicationSet(hub, 'web', { source: git, destinationNamespace: 'web' } as never),
    '[hub/PullApplicationSet:web] placement is missing',
  ],
  [
    'requeueAfterSeconds 0',
    ({ hub, all }) =>
      new PullApplicationSet(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        placement: all,
        requeueAfterSeconds: 0,
      }),
    '[hub/PullApplicationSet:web] requeueAfterSeconds 0 must be a whole number of seconds > 0',
  ],
  ['a spoke name that is not a DNS label', ({ hub }) => new Spoke(hub, 'East_1'), '[hub/East_1] spoke name "East_1"'],
  [
    'a destination namespace with a space',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', { source: git, destinationNamespace: 'Web Apps', spokes: [east] }),
    '[hub/PullApplication:web] destinationNamespace "Web Apps"',
  ],
  [
    'a destination that is not in-cluster',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        destinationServer: 'https://east:6443',
        spokes: [east],
      }),
    'destination server "https://east:6443" is not in-cluster',
  ],
  [
    'delivery to local-cluster',
    ({ hub }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [new Spoke(hub, 'local-cluster')],
      }),
    'is delivered to "local-cluster"',
  ],
  [
    'a project that is not a DNS subdomain',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', { source: git, destinationNamespace: 'web', project: 'Team A', spokes: [east] }),
    '[hub/PullApplication:web] project "Team A"',
  ],
  [
    'a label-selected set with a bad key',
    ({ hub }) => new ClusterSet(hub, 'gpu', { matchLabels: { 'has gpu': 'true' } }),
    '[hub/ClusterSet:gpu] matchLabels key "has gpu"',
  ],
  [
    'a binding namespace that is not a DNS label',
    ({ prod }) => prod.bindTo('Team_A'),
    'binding namespace of cluster set "prod" "Team_A"',
  ],
  [
    'a spoke joining a label-selected set exclusively',
    ({ hub }) => new Spoke(hub, 'north', { clusterSet: new ClusterSet(hub, 'gpu', { matchLabels: { gpu: 'true' } }) }),
    "selects members by labels, so it cannot be a spoke's exclusive clusterSet",
  ],
  [
    'a placement of another hub',
    ({ fleet, hub }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        placement: new Placement(new Hub(fleet, 'other', { controller: { enabled: false } }), 'p'),
      }),
    'belongs to hub "other", not "hub"',
  ],
  [
    'an ApplicationSet placement outside the Argo CD namespace',
    ({ hub, prod }) => {
      prod.bindTo('team-a');
      new PullApplicationSet(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        placement: new Placement(hub, 'team', { clusterSets: [prod], namespace: 'team-a' }),
      });
    },
    'but the ApplicationSet generator only reads decisions in "argocd"',
  ],
  [
    'a GitOpsCluster principal address without a port',
    ({ hub, all }) =>
      GitOpsCluster.ocm(hub, 'agents', { placement: all, principalServerAddress: 'principal.example.com' }),
    '[hub/GitOpsCluster:agents] principalServerAddress "principal.example.com" is given without principalServerPort',
  ],
  // Values that reach the constructs without TypeScript's help (JSON, a spread object, `any`): checked at runtime.
  [
    'spoke labels that are not strings (from JSON)',
    ({ hub }) => new Spoke(hub, 'north', JSON.parse('{"labels": {"replicas": 3, "gpu": true}}')),
    '[hub/north] labels.replicas is 3 (a number): expected a string (label values are strings): write it in quotes, "3"',
  ],
  [
    'a boolean spoke label value',
    ({ hub }) => new Spoke(hub, 'north', JSON.parse('{"labels": {"replicas": 3, "gpu": true}}')),
    '[hub/north] labels.gpu is true (a boolean): expected a string (label values are strings): write it in quotes, "true"',
  ],
  [
    'taints "none"',
    ({ hub }) => new Spoke(hub, 'north', { taints: 'none' } as never),
    '[hub/north] taints is "none" (a string): expected a list (each item a taint), for example [{ key: \'gpu\', effect: TaintEffect.NO_SELECT }]: give an empty list [] for none, or leave it out',
  ],
  [
    'autoSync "no"',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        autoSync: 'no',
      } as never),
    '[hub/PullApplication:web] autoSync is "no" (a string): expected true or false: write false (a boolean, without quotes)',
  ],
  [
    'numberOfClusters "2"',
    ({ hub, prod }) => new Placement(hub, 'p', { clusterSets: [prod], numberOfClusters: '2' } as never),
    '[hub/Placement:p] numberOfClusters is "2" (a string): expected a whole number: write 2 (a number, without quotes)',
  ],
  [
    'a source given as a string',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: 'https://git.example.com/apps.git',
        destinationNamespace: 'web',
        spokes: [east],
      } as never),
    '[hub/PullApplication:web] source is "https://git.example.com/apps.git" (a string): expected an AppSource: make it with AppSource.git',
  ],
  [
    'a placement given by name',
    ({ hub }) =>
      new PullApplicationSet(hub, 'web', { source: git, destinationNamespace: 'web', placement: 'all' } as never),
    '[hub/PullApplicationSet:web] placement is "all" (a string): expected a Placement: pass the Placement object',
  ],
  [
    'cluster sets given by name',
    ({ hub }) => new Placement(hub, 'p', { clusterSets: ['prod'] } as never),
    '[hub/Placement:p] clusterSets[0] is "prod" (a string): expected a ClusterSet: pass the ClusterSet object',
  ],
  [
    'a grant whose resources is a string',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [{ apiGroup: 'apps', resources: 'deployments' }],
      } as never),
    '[hub/PullApplication:web] resources[0].resources is "deployments" (a string): expected a list (each item a string)',
  ],
  [
    'a Helm chart version given as a number',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.helm({ repoURL: 'https://charts.example.com', chart: 'web', targetRevision: 1.5 } as never),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    '[hub/PullApplication:web] app "web": AppSource.helm: targetRevision is 1.5 (a number): expected a string: write it in quotes, "1.5"',
  ],
  [
    'a principal port given as a string',
    ({ hub, all }) =>
      GitOpsCluster.ocm(hub, 'agents', {
        placement: all,
        principalServerAddress: 'principal.example.com',
        principalServerPort: '443',
      } as never),
    '[hub/GitOpsCluster:agents] principalServerPort is "443" (a string): expected a port number: write 443 (a number, without quotes)',
  ],
  [
    'a hub flavor in lower case',
    () => undefined,
    '[hub] flavor is "ocm" (a string): expected one of HubFlavor.OCM, HubFlavor.ACM: use HubFlavor.OCM (the string "OCM")',
    { hub: { flavor: 'ocm' as never } },
  ],
  [
    'controller replicas given as a string',
    () => undefined,
    '[hub] controller.replicas is "3" (a string): expected a whole number: write 3 (a number, without quotes)',
    { hub: { controller: { enabled: true, replicas: '3' as never } } },
  ],
  [
    'spoke props given as a string',
    ({ hub }) => new Spoke(hub, 'north', 'prod' as never),
    '[hub/north] the props of Spoke are "prod" (a string): expected an object with the keys clusterSet, labels',
  ],
  [
    'an inventory override label that is not a string',
    ({ hub }) => hub.addInventory(inventory, { overrides: { north: { labels: { tier: 1 } } } } as never),
    '[hub] overrides.north.labels.tier is 1 (a number): expected a string (label values are strings): write it in quotes, "1"',
  ],
  [
    '(strict) a misspelled inventory override key',
    ({ hub }) => hub.addInventory(inventory, { overrides: { north: { label: { tier: 'gold' } } } } as never),
    '[hub] overrides.north.label is not a prop of spoke override, so {"tier":"gold"} is ignored: did you mean overrides.north.labels?',
    { strict: true },
  ],
  [
    '(strict) a misspelled pruneOnDelete in a shared props object',
    ({ hub, east }) => {
      const shared = { source: git, destinationNamespace: 'web', pruneOnDelet: true, autosync: false };
      new PullApplication(hub, 'web', { ...shared, spokes: [east] });
    },
    '[hub/PullApplication:web] pruneOnDelet is not a prop of PullApplication, so true is ignored: did you mean pruneOnDelete?',
    { strict: true },
  ],
  [
    '(strict) a misspelled autoSync in a shared props object',
    ({ hub, all }) => {
      const shared = { source: git, destinationNamespace: 'web', pruneOnDelet: true, autosync: false };
      new PullApplicationSet(hub, 'web', { ...shared, placement: all });
    },
    '[hub/PullApplicationSet:web] autosync is not a prop of PullApplicationSet, so false is ignored: did you mean autoSync?',
    { strict: true },
  ],
  [
    '(strict) an unknown key of a nested object',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        resources: [{ apiGroup: 'apps', resources: ['deployments'], verbs: ['get'] }],
      } as never),
    '[hub/PullApplication:web] resources[0].verbs is not a prop of resources grant, so ["get"] is ignored: remove it (the props are apiGroup, resources, clusterScoped, kinds)',
    { strict: true },
  ],
  [
    '(strict) an unknown key of an AppSource',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web', revision: 'main' } as never),
        destinationNamespace: 'web',
        spokes: [east],
      }),
    '[hub/PullApplication:web] app "web": AppSource.git: revision is not a prop of AppSource.git, so "main" is ignored',
    { strict: true },
  ],
  // Warnings turn into errors with --strict.
  [
    '(strict) an app delivered nowhere',
    ({ hub }) => new PullApplication(hub, 'web', { source: git, destinationNamespace: 'web' }),
    '[hub/PullApplication:web] app "web" is delivered nowhere',
    { strict: true },
  ],
  [
    '(strict) a placement that selects no spoke',
    ({ hub, prod }) => new Placement(hub, 'gpu', { clusterSets: [prod], predicates: [{ labels: { gpu: 'true' } }] }),
    "[hub/Placement:gpu] selects none of the hub's 2 spokes (evaluated offline)",
    { strict: true },
  ],
  [
    '(strict) numberOfClusters 0',
    ({ hub, prod }) => new Placement(hub, 'none', { clusterSets: [prod], numberOfClusters: 0 }),
    '[hub/Placement:none] numberOfClusters is 0, so this placement selects no cluster',
    { strict: true },
  ],
  [
    '(strict) a negative Steady weight with numberOfClusters (the hub keeps moving the decisions)',
    ({ hub, prod }) =>
      new Placement(hub, 'flap', {
        clusterSets: [prod],
        numberOfClusters: 1,
        prioritizers: [Prioritizer.builtIn('Steady', -2)],
        prioritizerMode: PrioritizerMode.EXACT,
      }),
    "[hub/Placement:flap] Prioritizer.builtIn('Steady') has weight -2: OCM re-schedules the placement whenever its decisions change",
    { strict: true },
  ],
  [
    '(strict) a kube-system destination',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', { source: git, destinationNamespace: 'kube-system', spokes: [east] }),
    'destinationNamespace "kube-system" is a system namespace',
    { strict: true },
  ],
  [
    '(strict) an openshift-* destination',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', { source: git, destinationNamespace: 'openshift-monitoring', spokes: [east] }),
    'destinationNamespace "openshift-monitoring" is a system namespace',
    { strict: true },
  ],
  [
    '(strict) the Argo CD namespace as destination',
    ({ hub, east }) => new PullApplication(hub, 'web', { source: git, destinationNamespace: 'argocd', spokes: [east] }),
    'destinationNamespace "argocd" is the Argo CD namespace',
    { strict: true },
  ],
  [
    '(strict) a user label overriding a pullfleet key',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        labels: { 'app.kubernetes.io/managed-by': 'me' },
      }),
    'app label "app.kubernetes.io/managed-by" overrides a key pullfleet, OCM or Argo CD sets',
    { strict: true },
  ],
  [
    '(strict) a user label overriding the pull label',
    ({ hub, east }) =>
      new PullApplication(hub, 'web', {
        source: git,
        destinationNamespace: 'web',
        spokes: [east],
        labels: { 'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'false' },
      }),
    'overrides a key pullfleet, OCM or Argo CD sets',
    { strict: true },
  ],
];

/** Every file under `dir` with the SHA-256 of its bytes (a failure then prints a short diff). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      out.set(
        path.relative(dir, path.join(entry.parentPath, entry.name)),
        createHash('sha256')
          .update(fs.readFileSync(path.join(entry.parentPath, entry.name)))
          .digest('hex'),
      );
  }
  return out;
}

describe('bad fleet configs', () => {
  let root: string;
  let outdir: string;
  let before: Map<string, string>;

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-bad-'));
    outdir = path.join(root, 'dist');
    base(outdir).fleet.synth(); // the previous good output
    before = snapshot(outdir);
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('the table holds at least 40 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(before.size).toBeGreaterThan(3);
  });

  // Every row has all four columns: jest would take a missing fourth argument for a `done` callback.
  const rows = cases.map(([name, build, fragment, options]) => [name, build, fragment, options ?? {}] as const);
  test.each(rows)('fails on %s, and dist/ is unchanged', (_name, build, fragment, options) => {
    const b = base(outdir, options);
    build(b);
    let error: unknown;
    try {
      b.fleet.synth();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FleetValidationError);
    expect((error as Error).message).toContain(fragment);
    expect(snapshot(outdir)).toStrictEqual(before);
  });

  test('GIVEN the warnings of the strict cases WHEN synthesized without strict THEN synth writes and lists them', () => {
    const dir = path.join(root, 'lenient');
    const progress: string[] = [];
    const fleet = new Fleet({ outdir: dir, strict: false, onProgress: (m) => progress.push(m) });
    const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
    const prod = new ClusterSet(hub, 'prod');
    const east = new Spoke(hub, 'east', { clusterSet: prod });
    new Placement(hub, 'none', { clusterSets: [prod], numberOfClusters: 0 });
    new PullApplication(hub, 'web', {
      source: git,
      destinationNamespace: 'kube-system',
      spokes: [east],
      resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
    });
    fleet.synth();
    expect(fs.existsSync(path.join(dir, 'hub', 'hub', 'applications.yaml'))).toBe(true);
    expect(progress.filter((m) => m.startsWith('warning: '))).toStrictEqual(
      [
        '[hub/Placement:none] numberOfClusters is 0, so this placement selects no cluster and its apps go nowhere: raise it, or leave it out to select every matching cluster',
        '[hub/PullApplication:web] destinationNamespace "kube-system" is a system namespace: the app\'s pruning and self-heal would act on cluster components; deploy into a namespace of its own',
      ].map((m) => `warning: ${m}`),
    );
  });
});

describe('one report', () => {
  test('GIVEN what constructors used to throw one at a time WHEN synthesized THEN every problem is listed in one run', () => {
    const { fleet, hub, prod, east, all } = base('/nonexistent/never-written');
    new Spoke(hub, 'east');
    new Placement(hub, 'p', { clusterSets: [prod], numberOfClusters: -2 });
    new PullApplication(hub, 'no-source', { destinationNamespace: 'web', spokes: [east] });
    new PullApplicationSet(hub, 'appset', {
      source: git,
      destinationNamespace: 'web',
      placement: all,
      requeueAfterSeconds: -1,
    });
    prod.bindTo('argocd');
    const problems = fleet.problems().map((p) => `[${p.path}] ${p.message.split(':')[0]}`);
    expect(problems).toEqual(
      expect.arrayContaining([
        '[hub/east] "hub" already has a Spoke with the id "east" (hub/east)',
        '[hub/Placement:p] numberOfClusters -2 must be a whole number >= 0',
        '[hub/PullApplication:no-source] source is missing',
        '[hub/PullApplicationSet:appset] requeueAfterSeconds -1 must be a whole number of seconds > 0',
        '[hub/ClusterSet:prod] cluster set "prod" is already bound to namespace "argocd"',
      ]),
    );
  });

  test('GIVEN a ClusterSet and a Placement both called prod THEN both render under their own construct ids', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
    const prod = new ClusterSet(hub, 'prod');
    new Spoke(hub, 'east', { clusterSet: prod });
    const placement = new Placement(hub, 'prod', { clusterSets: [prod] });
    expect(fleet.problems()).toStrictEqual([]);
    expect([prod.node.path, placement.node.path]).toStrictEqual(['hub/ClusterSet:prod', 'hub/Placement:prod']);
    const kinds = [...fleet.renderObjects().values()]
      .flat()
      .filter((o) => (o.metadata as { name: string }).name === 'prod')
      .map((o) => o.kind);
    expect(kinds.sort()).toStrictEqual(['ManagedClusterSet', 'ManagedClusterSetBinding', 'Placement']);
  });

  test('GIVEN one bad value repeated on every spoke THEN it is reported once, with a count', () => {
    const { fleet, hub, east, west } = base('/nonexistent/never-written');
    new PullApplication(hub, 'web', {
      source: git,
      destinationNamespace: 'web',
      spokes: [east, west],
      syncOptions: ['Nope=1'],
    });
    const lines = fleet.problems().filter((p) => p.message.includes('"Nope=1"'));
    expect(lines).toHaveLength(1);
    expect(lines[0].path).toBe('hub/PullApplication:web');
    expect(lines[0].message).toMatch(/\(and 3 more objects made by this construct\)$/);
  });
});
