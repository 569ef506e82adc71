/**
 * What the rollout of a waved app sees of its hub Applications before the engine steps it
 * (src/model/rollout/gate.ts): the observation of each cluster, the hub Applications it cannot observe
 * with why, and whether the hub has applied the policy's revision to every hub Application yet.
 */
import { describe, expect, test } from '@jest/globals';
import { MANAGED_CLUSTER_ANNOTATION } from '../../../src/model/core/keys.js';
import type { Application, JsonObject, ManifestWork } from '../../../src/model/core/types.js';
import { buildPayloadApplication } from '../../../src/model/delivery/manifestwork.js';
import { ROLLOUT_RESUME_ANNOTATION, ROLLOUT_REVISION_ANNOTATION } from '../../../src/model/rollout/policy.js';
import {
  deliveredPayload,
  desiredPayloadHash,
  observeRollout,
  revisionLag,
  rolloutResumeToken,
  type RolloutLookups,
} from '../../../src/model/rollout/gate.js';
import { buildWavedHubApplication } from '../../../src/model/rollout/static.js';
import { buildRolloutPolicyConfigMap } from '../../../src/model/rollout/state.js';

const def = {
  name: 'web',
  project: 'default',
  sources: [{ repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: 'v1' }],
  destinationNamespace: 'web',
  pruneOnDelete: true,
};
const hubApp = (cluster: string, revision = 'r1'): Application =>
  buildWavedHubApplication(def, { cluster, namespace: 'argocd', constructPath: `hub/web/${cluster}` }, revision);
const policyMap = (revision: string) =>
  buildRolloutPolicyConfigMap(
    {
      app: 'web',
      maxFailures: 0,
      onFailure: 'pause',
      progressDeadlineSeconds: 600,
      waves: [{ name: 'all', clusters: ['east', 'west'], soakSeconds: 0 }],
    },
    'argocd',
    'hub/web',
    revision,
  );

/** A work carrying `app`'s payload. */
function workOf(app: Application): ManifestWork {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: {
      name: `argocd-${app.metadata.name}`,
      namespace: app.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION],
    },
    spec: { workload: { manifests: [buildPayloadApplication(app) as unknown as JsonObject] } },
  };
}

/** Lookups over a world of works by cluster. */
function lookups(works: Record<string, ManifestWork>): RolloutLookups {
  return {
    desiredHash: desiredPayloadHash,
    work: (cluster) => works[cluster],
    delivered: deliveredPayload,
  };
}

describe('observeRollout', () => {
  test('GIVEN a hub Application whose work carries its payload THEN its cluster is observed with that payload delivered', () => {
    const east = hubApp('east');
    const { observations, unobservable } = observeRollout([east], lookups({ east: workOf(east) }));
    expect(unobservable).toStrictEqual({});
    expect(observations).toStrictEqual([
      { cluster: 'east', desired: desiredPayloadHash(east), delivered: desiredPayloadHash(east), sawDelivered: false },
    ]);
  });

  test('GIVEN a hub Application without a work THEN its cluster is observed with nothing delivered', () => {
    const west = hubApp('west');
    expect(observeRollout([west], lookups({})).observations).toStrictEqual([
      { cluster: 'west', desired: desiredPayloadHash(west), sawDelivered: false },
    ]);
  });

  test('GIVEN hub Applications being deleted, without a target cluster, or that cannot be delivered THEN each is unobservable, with why', () => {
    const deleting = hubApp('east');
    const leaving: Application = {
      ...deleting,
      metadata: { ...deleting.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    const nowhere = hubApp('west');
    const { [MANAGED_CLUSTER_ANNOTATION]: _cluster, ...annotations } = nowhere.metadata.annotations ?? {};
    const unnamed: Application = { ...nowhere, metadata: { ...nowhere.metadata, annotations } };
    const local = hubApp('local-cluster');
    const { observations, unobservable } = observeRollout([leaving, unnamed, local], lookups({}));
    expect(observations).toStrictEqual([]);
    expect(Object.keys(unobservable)).toStrictEqual([
      leaving.metadata.name,
      unnamed.metadata.name,
      local.metadata.name,
    ]);
    expect(unobservable[leaving.metadata.name]).toBe('is being deleted');
    expect(unobservable[unnamed.metadata.name]).toBe(
      `names no target cluster (annotation ${MANAGED_CLUSTER_ANNOTATION} is missing)`,
    );
    expect(unobservable[local.metadata.name]).toMatch(/^cannot be delivered \(.+\); its own conditions say more$/);
    expect(desiredPayloadHash(local)).toBeUndefined();
  });
});

describe('revisionLag', () => {
  test('GIVEN every hub Application at the policy revision THEN none lags', () => {
    expect(revisionLag(policyMap('r1'), [hubApp('east'), hubApp('west')])).toBeUndefined();
  });

  test('GIVEN a hub Application at an older revision THEN it lags behind the policy revision', () => {
    const west = hubApp('west', 'r0');
    expect(revisionLag(policyMap('r1'), [hubApp('east'), west])).toStrictEqual({ revision: 'r1', behind: [west] });
  });

  test('GIVEN a policy without a revision THEN nothing lags', () => {
    const map = policyMap('r1');
    const { [ROLLOUT_REVISION_ANNOTATION]: _revision, ...annotations } = map.metadata.annotations ?? {};
    expect(revisionLag({ ...map, metadata: { ...map.metadata, annotations } }, [hubApp('east', 'r0')])).toBeUndefined();
  });
});

describe('rolloutResumeToken', () => {
  test('is the resume annotation of the policy ConfigMap, if any', () => {
    const map = policyMap('r1');
    expect(rolloutResumeToken(map)).toBeUndefined();
    const resumed = {
      ...map,
      metadata: { ...map.metadata, annotations: { ...map.metadata.annotations, [ROLLOUT_RESUME_ANNOTATION]: 't1' } },
    };
    expect(rolloutResumeToken(resumed)).toBe('t1');
  });
});
