import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { Construct } from 'constructs';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';
import { FleetValidationError } from '../../src/model/validation/rules.js';
import { smallFleet, synthError } from '../constructs/helpers.js';

const source = AppSource.git({ repoURL: 'https://example.com/apps.git', path: 'app' });

describe('fleet validation', () => {
  test('fails when an app targets a spoke of another hub (unknown spoke)', () => {
    const { fleet, hub } = smallFleet();
    const other = new Hub(fleet, 'other');
    const stranger = new Spoke(other, 'stranger');
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [stranger] });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplication:web] spoke "stranger" (other/stranger) is not a spoke of hub "hub": declare it on this hub or deliver from its own hub',
    );
  });

  test('fails when a placement uses a cluster set of another hub (unknown cluster set)', () => {
    const { fleet, hub } = smallFleet();
    const foreign = new ClusterSet(new Hub(fleet, 'other'), 'foreign');
    new Placement(hub, 'p', { clusterSets: [foreign] });
    expect(synthError(fleet)).toContain(
      '[hub/Placement:p] cluster set "foreign" (other/ClusterSet:foreign) is not a cluster set of hub "hub": use a ClusterSet declared on this hub',
    );
  });

  test('fails when a spoke joins a cluster set of another hub', () => {
    const { fleet, hub } = smallFleet();
    const foreign = new ClusterSet(new Hub(fleet, 'other'), 'foreign');
    new Spoke(hub, 'lost', { clusterSet: foreign });
    expect(synthError(fleet)).toContain(
      '[hub/lost] cluster set "other/ClusterSet:foreign" belongs to hub "other", not "hub": use a ClusterSet of this spoke\'s hub',
    );
  });

  test('fails when a placement uses a cluster set not bound to its namespace', () => {
    const { fleet, hub, prod } = smallFleet();
    new Placement(hub, 'team', { clusterSets: [prod], namespace: 'team-a' });
    expect(synthError(fleet)).toContain(
      '[hub/Placement:team] cluster set "prod" is not bound to namespace "team-a", so this placement would select nothing from it: add "team-a" to the set\'s bindings (clusterSet.bindTo(\'team-a\'))',
    );
  });

  test('fails when an app is delivered to local-cluster', () => {
    const { fleet, hub } = smallFleet();
    const local = new Spoke(hub, 'local-cluster');
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [local] });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplication:web] app "web" is delivered to "local-cluster", which is the hub itself and never a pull-delivery target: remove it from the app\'s spokes (or the placement\'s clusters)',
    );
  });

  test('fails when two objects collide (duplicate hub Application names)', () => {
    const { fleet, hub } = smallFleet();
    const c = new Spoke(hub, 'c');
    const bc = new Spoke(hub, 'b-c');
    new PullApplication(hub, 'a-b', { source, destinationNamespace: 'web', spokes: [c] });
    new PullApplication(hub, 'a', { source, destinationNamespace: 'web', spokes: [bc] });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplication:a/b-c/HubApplication/Application] Application "argocd/a-b-c" collides with the one made by hub/PullApplication:a-b/c/HubApplication/Application (same hub): rename one of the two',
    );
  });

  test('fails when a static hub Application collides with one an ApplicationSet will generate', () => {
    const { fleet, hub, prod } = smallFleet();
    const placement = new Placement(hub, 'prod-all', { clusterSets: [prod] });
    new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });
    const webSpoke = new Spoke(new Construct(hub, 'clusters'), 'web');
    new PullApplication(hub, 'east-app', { name: 'east', source, destinationNamespace: 'east', spokes: [webSpoke] });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplicationSet:web (generated at runtime for spoke east)] Application "argocd/east-web" collides with the one made by hub/PullApplication:east-app/web/HubApplication/Application (same hub): rename one of the two',
    );
  });

  test('fails when two apps have the same name', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [east] });
    new PullApplication(hub, 'web2', { name: 'web', source, destinationNamespace: 'web', spokes: [east] });
    expect(synthError(fleet)).toContain(
      'Application "argocd/web-east" collides with the one made by hub/PullApplication:web/east/HubApplication/Application',
    );
  });

  test('fails when names are not valid DNS labels', () => {
    const { fleet, hub } = smallFleet();
    new Spoke(hub, 'East_1');
    new PullApplication(hub, 'web', { source, destinationNamespace: 'Web Apps' });
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/East_1] spoke name "East_1" must consist of lower-case letters, digits and "-", and start and end with a letter or digit: use lower-case letters, digits and "-" (at most 63 characters)',
    );
    expect(message).toContain(
      '[hub/PullApplication:web] destinationNamespace "Web Apps" must consist of lower-case letters',
    );
  });

  test('fails when a name is longer than 63 characters', () => {
    const { fleet, hub } = smallFleet();
    new Spoke(hub, 's'.repeat(64));
    expect(synthError(fleet)).toContain(`spoke name "${'s'.repeat(64)}" is 64 characters long; the limit is 63`);
  });

  test('fails when a label value is invalid', () => {
    const { fleet, hub } = smallFleet();
    new Spoke(hub, 'x', { labels: { team: 'a b' } });
    expect(synthError(fleet)).toContain(
      '[hub/x] spoke label team="a b" must consist of letters, digits, "-", "_" and ".", and start and end with a letter or digit: shorten or replace the value',
    );
  });

  test('fails when a payload is over the ManifestWork size budget', () => {
    const { fleet, hub, east } = smallFleet({ workSizeBudget: 2000 });
    const big = AppSource.helm({
      repoURL: 'https://charts.example.com',
      chart: 'big',
      targetRevision: '1.0.0',
      values: { blob: 'x'.repeat(3000) },
    });
    new PullApplication(hub, 'big', { source: big, destinationNamespace: 'big', spokes: [east] });
    expect(synthError(fleet)).toMatch(
      /\[hub\/PullApplication:big\] ManifestWork east\/argocd-big-east is \d+ bytes, over the size budget of 2000 bytes: move large values \(Helm values, plugin env\) into the source repository or raise the hub's workSizeBudget/,
    );
  });

  test('fails when the destination is not in-cluster', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', {
      source,
      destinationNamespace: 'web',
      destinationServer: 'https://east.example:6443',
      spokes: [east],
    });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplication:web] destination server "https://east.example:6443" is not in-cluster: a pulled app always deploys to the spoke it runs on; drop destinationServer or set it to "https://kubernetes.default.svc"',
    );
  });

  test('fails when a non-default project declares cluster-scoped resources without their kinds', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'ops', {
      source,
      destinationNamespace: 'ops',
      project: 'platform',
      spokes: [east],
      resources: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'], clusterScoped: true }],
    });
    expect(synthError(fleet)).toContain(
      `[hub/PullApplication:ops] cluster-scoped resources ["clusterroles"] of API group "rbac.authorization.k8s.io" are declared without kinds, but project "platform" admits only the cluster-scoped kinds its AppProject whitelists: add kinds to the grant, for example kinds: ['ClusterRole']`,
    );
  });

  test('fails when a grant names something that is not a kind', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'ops', {
      source,
      destinationNamespace: 'ops',
      spokes: [east],
      resources: [
        {
          apiGroup: 'rbac.authorization.k8s.io',
          resources: ['clusterroles'],
          clusterScoped: true,
          kinds: ['clusterroles'],
        },
      ],
    });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplication:ops] kind "clusterroles" of the grant for API group "rbac.authorization.k8s.io" is not a Kubernetes kind',
    );
  });

  test('fails when an ApplicationSet uses a placement outside the Argo CD namespace', () => {
    const { fleet, hub, prod } = smallFleet();
    prod.bindTo('team-a');
    const placement = new Placement(hub, 'team', { clusterSets: [prod], namespace: 'team-a' });
    new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplicationSet:web] placement "team" is in namespace "team-a", but the ApplicationSet generator only reads decisions in "argocd": create the placement in "argocd"',
    );
  });

  test('GIVEN several problems WHEN synthesized THEN every one is listed and nothing is written', () => {
    const outdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-val-')), 'dist');
    const progress: string[] = [];
    const fleet = new Fleet({ outdir, onProgress: (m) => progress.push(m) });
    const hub = new Hub(fleet, 'hub');
    const local = new Spoke(hub, 'local-cluster');
    new Spoke(hub, 'Bad_Name');
    new PullApplication(hub, 'web', {
      source,
      destinationNamespace: 'web',
      destinationServer: 'https://x:6443',
      spokes: [local],
    });
    let error: unknown;
    try {
      fleet.synth();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FleetValidationError);
    const problems = (error as FleetValidationError).problems;
    expect(problems.map((p) => p.path)).toStrictEqual([
      'hub/Bad_Name',
      'hub/PullApplication:web',
      'hub/PullApplication:web',
    ]);
    expect((error as Error).message.split('\n')[0]).toBe(
      'fleet validation failed with 3 problems (nothing was written):',
    );
    expect(fs.existsSync(outdir)).toBe(false);
    expect(progress).toStrictEqual([]);
    fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
  });

  test.each([
    ['a new output folder (written while it is validated)', false],
    ['an output folder that holds files (written once all of it is validated)', true],
  ])(
    'GIVEN a valid fleet WHEN synthesized into %s THEN progress reports validation and every 1,000 files written',
    (_, holdsFiles) => {
      const outdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-progress-')), 'dist');
      if (holdsFiles) {
        fs.mkdirSync(outdir, { recursive: true });
        fs.writeFileSync(path.join(outdir, 'notes.txt'), 'kept\n');
      }
      const progress: string[] = [];
      const fleet = new Fleet({
        outdir,
        onProgress: (m) => progress.push(m.replace(/ \([\d.]+ s since start\)/, ' (t)')),
      });
      const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
      const spokes = Array.from({ length: 1200 }, (_, i) => new Spoke(hub, `s${i}`));
      new PullApplication(hub, 'web', {
        source,
        destinationNamespace: 'web',
        spokes,
        resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
      });
      fleet.synth();
      // YAML files only: dist/<hub>/plan-state.json is written beside them for pullfleet plan
      const written = fs
        .readdirSync(outdir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.yaml'));
      const objects = written.reduce(
        (sum, e) => sum + (fs.readFileSync(path.join(e.parentPath, e.name), 'utf8').match(/^kind: /gm)?.length ?? 0),
        0,
      );
      // per spoke: a bootstrap file and a works file; plus cluster-secrets.yaml and applications.yaml
      expect(written.length).toBe(2402);
      const validated = `validated 1 hub, ${objects} objects in 2402 files (t)`;
      expect(progress).toStrictEqual([
        ...(holdsFiles ? [validated] : []),
        'wrote 1000/2402 files (t)',
        'wrote 2000/2402 files (t)',
        ...(holdsFiles ? [] : [validated]),
        'wrote 2402 files of objects, 1 plan state and the manifest (t)',
        // two works per spoke: the app's and the bootstrap
        `hub: ${objects} objects (2400 ManifestWorks) in 2402 files`,
      ]);
      expect(fs.readdirSync(path.join(outdir, 'hub', 'hub', 'works')).length).toBe(1200);
      fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
    },
  );
});
