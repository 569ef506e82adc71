/**
 * The Application an ApplicationSet generates for a spoke is named `<spoke>-<app>` in full (the
 * applicationset-controller shortens nothing), so the work name synth records in the plan state is the
 * one the controller will write, and a name too long for a label value is a warning naming it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { AppSource, ClusterSet, Fleet, Hub, Placement, PullApplicationSet, Spoke } from '../../src/constructs/index.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import type { Application } from '../../src/model/core/types.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const SPOKE = `edge-${'s'.repeat(58)}`; // 63 characters
const APP = `app-${'a'.repeat(59)}`; // 63 characters

function longNamedFleet(): { fleet: Fleet; outdir: string } {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-appset-names-'));
  scratch.push(outdir);
  const fleet = new Fleet({ outdir });
  const hub = new Hub(fleet, 'hub', { argoNamespace: 'argocd' });
  const prod = new ClusterSet(hub, 'prod');
  new Spoke(hub, SPOKE, { clusterSet: prod });
  const placement = new Placement(hub, 'all', { clusterSets: [prod] });
  new PullApplicationSet(hub, APP, {
    source: AppSource.git({ repoURL: 'https://git.example/apps.git', path: 'app', targetRevision: 'main' }),
    destinationNamespace: 'app',
    placement,
  });
  return { fleet, outdir };
}

describe('names of the Applications an ApplicationSet generates', () => {
  test('GIVEN a 63-character app on a 63-character spoke WHEN synthesized THEN the plan state records the work the controller will write for the generated app', () => {
    const { fleet, outdir } = longNamedFleet();
    fleet.synth();
    const appSet = fleet
      .renderObjects()
      .get('hub/hub/application-sets.yaml')!
      .find((o) => o.kind === 'ApplicationSet') as {
      metadata: { namespace: string };
      spec: { template: { metadata: Application['metadata']; spec: Application['spec'] } };
    };
    // What the applicationset-controller makes of the template for this spoke, then the controller's work for it.
    const generated = JSON.parse(JSON.stringify(appSet.spec.template).replaceAll('{{name}}', SPOKE)) as {
      metadata: Application['metadata'];
      spec: Application['spec'];
    };
    const app: Application = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { ...generated.metadata, namespace: appSet.metadata.namespace },
      spec: generated.spec,
    };
    expect(app.metadata.name).toBe(`${SPOKE}-${APP}`);
    const controllerWork = buildManifestWork(app).metadata.name;

    const state = JSON.parse(fs.readFileSync(path.join(outdir, 'hub', 'plan-state.json'), 'utf8')) as {
      spokes: Array<{ name: string; works: Array<{ name: string }> }>;
    };
    expect(state.spokes.find((s) => s.name === SPOKE)!.works.map((w) => w.name)).toStrictEqual([controllerWork]);
  });

  test('GIVEN a generated name over 63 characters WHEN synthesized THEN a warning names it and the longest app name that fits', () => {
    const { fleet } = longNamedFleet();
    const warnings = fleet.warnings().map((w) => `[${w.path}] ${w.message}`);
    expect(warnings).toContainEqual(
      `[hub/PullApplicationSet:${APP}] the Application generated for spoke "${SPOKE}" is named "${SPOKE}-${APP}" (127 characters, over 63): Argo CD's label-based resource tracking and ACM's search carry the app name in a label value; the spoke name alone leaves no room: shorten the spoke name`,
    );
  });
});
