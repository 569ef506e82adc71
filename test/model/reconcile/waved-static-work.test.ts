/**
 * A waved app takes over the work synth rendered for it only when synth handed that work over: rendered
 * with Argo CD's Prune=false (step 1 of making the app waved, or a spoke rejoining the waves after a move).
 * A static work synth renders without it belongs to a spoke outside the waves, for example step 1 of a move
 * to agent-managed, which takes the resources finalizer off the spoke Application. Argo CD applies the hub
 * Application before the work, but the controller may see the new work before the new hub Application: a
 * waved hub Application still in its cache must then write nothing over that work, or step 2 of the move
 * would delete a spoke Application that still prunes its workload.
 */
import { describe, expect, test } from '@jest/globals';
import { ARGOCD_SYNC_OPTIONS_ANNOTATION, CLEANUP_FINALIZER } from '../../../src/model/core/keys.js';
import type { Application, ManifestWork } from '../../../src/model/core/types.js';
import { applyAgentHandback, buildStaticHubApplication } from '../../../src/model/delivery/hub-application.js';
import { buildManifestWork, buildPayloadApplication } from '../../../src/model/delivery/manifestwork.js';
import { payloadHash } from '../../../src/model/rollout/gate.js';
import { buildWavedHubApplication, protectFromPrune } from '../../../src/model/rollout/static.js';
import { computePropagation } from '../../../src/model/reconcile/propagation.js';

const def = {
  name: 'web',
  project: 'default',
  sources: [{ repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: 'v1' }],
  destinationNamespace: 'web',
  pruneOnDelete: true,
};
const target = { cluster: 'east', namespace: 'argocd', constructPath: 'hub/PullApplication:web/east' };
const RESOURCES_FINALIZER = 'resources-finalizer.argocd.argoproj.io';

/** The waved hub Application the controller still has in its cache, with the finalizer it had. */
const waved = buildWavedHubApplication(def, target, 'r1');
const stale: Application = {
  ...waved,
  metadata: { ...waved.metadata, uid: 'u1', finalizers: [...(waved.metadata.finalizers ?? []), CLEANUP_FINALIZER] },
};
/** The rollout promoted east to the payload it runs (the cluster is done). */
const gate = { kind: 'allow' as const, hash: payloadHash(buildPayloadApplication(stale)) };
const applied = (work: ManifestWork): ManifestWork => ({
  ...work,
  metadata: {
    ...work.metadata,
    uid: 'w1',
    generation: 2,
    annotations: {
      ...work.metadata.annotations,
      'argocd.argoproj.io/tracking-id': 'hub:work.open-cluster-management.io/ManifestWork:east/argocd-web-east',
    },
  },
});
const payloadFinalizers = (work: ManifestWork | undefined) =>
  (
    work?.spec.workload.manifests.find((m) => (m as { kind?: string }).kind === 'Application') as
      Application | undefined
  )?.metadata.finalizers;

describe('a waved hub Application and the static work synth rendered at its target', () => {
  test('GIVEN step 1 of a move to agent-managed rendered the work without Prune=false WHEN the controller still sees the waved hub Application THEN it writes nothing over the work and says why', () => {
    const moving = applyAgentHandback(buildStaticHubApplication(def, target), 'east', {
      standBy: false,
      route: false,
      agentDestination: false,
      releaseFinalizer: true,
    });
    const work = applied(buildManifestWork(moving));
    expect(payloadFinalizers(work) ?? []).not.toContain(RESOURCES_FINALIZER);

    const plan = computePropagation({
      namespace: 'argocd',
      name: 'web-east',
      app: stale,
      works: [],
      workAtTarget: work,
      rolloutGate: gate,
    });

    expect(plan.apply).toBeUndefined();
    expect(plan.adopt).toBeUndefined();
    expect(plan.deletes).toStrictEqual([]);
    expect(plan.problem).toBe(
      "ManifestWork east/argocd-web-east is rendered by synth without Argo CD's Prune=false, so it is not handed to the rollout of this waved app: the spoke is outside the app's waves (a move between delivery models); nothing is written over it. This clears once the hub applies the commit that renders this Application (static for a spoke outside the waves), or synthesize again",
    );
  });

  test('GIVEN the work was handed over with Prune=false WHEN the controller sees the waved hub Application THEN it takes the work over', () => {
    const work = applied(protectFromPrune(buildManifestWork(buildStaticHubApplication(def, target))));
    expect(work.metadata.annotations?.[ARGOCD_SYNC_OPTIONS_ANNOTATION]).toBe('Prune=false');

    const plan = computePropagation({
      namespace: 'argocd',
      name: 'web-east',
      app: stale,
      works: [],
      workAtTarget: work,
      rolloutGate: gate,
    });

    expect(plan.problem).toBeUndefined();
    expect(plan.adopt).toMatchObject({ namespace: 'east', name: 'argocd-web-east' });
    expect(payloadFinalizers(plan.apply)).toContain(RESOURCES_FINALIZER);
  });
});
