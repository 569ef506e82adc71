/**
 * Multi-source Applications report their revisions (issue 28), through OCM's real work agent (v1.3.1) and
 * the shipped controller: the test plays only the spoke Argo CD. A multi-source spoke Application carries
 * `status.sync.revisions` and `status.operationState.syncResult.revisions` (one entry per source, no
 * `revision`); the work asks for each index as a path of its own, the agent reports each as a scalar, and the
 * controller puts both lists back together on the hub Application. A list shorter than the sources (an index
 * the JSONPath does not reach) costs that entry only: the agent reports every other value.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { manifestWorkName } from '../../src/model/core/names.js';
import type { Application } from '../../src/model/core/types.js';
import { describeRealOcm, type OcmSpoke } from '../support/real-ocm.js';
import { waitFor } from '../support/wait.js';
import { OcmFleet } from '../support/ocm-fleet.js';
import { hubApp } from '../e2e/scenarios.js';
import {
  APP_API,
  conditionOf,
  feedbackValues,
  manifestStatus,
  readApp,
  readWork,
  report,
  type Obj,
} from './support.js';

const WAIT = { timeoutMs: 90_000, intervalMs: 50 };
const CHART = '6.7.1';
const VALUES_SHA = '53e28ff20cc530b9ada2173fbbd64d48338583ba';

/** Second-precision RFC 3339, as Kubernetes writes times. */
const kubeTime = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The status Argo CD writes on a multi-source Application synced to `revisions` (v3.5.1 controller/state.go, sync.go). */
function multiSourceStatus(revisions: string[], synced: string[] = revisions): Obj {
  return {
    sync: {
      status: 'Synced',
      revisions,
      comparedTo: {
        sources: [{ repoURL: 'https://stefanprodan.github.io/podinfo' }, { repoURL: 'https://git.example/values.git' }],
        destination: { server: 'https://kubernetes.default.svc' },
      },
    },
    health: { status: 'Healthy' },
    reconciledAt: kubeTime(),
    operationState: {
      phase: 'Succeeded',
      message: 'successfully synced (all tasks run)',
      startedAt: kubeTime(-2000),
      finishedAt: kubeTime(),
      operation: { sync: { revisions: synced } },
      // Argo CD leaves `revision` empty (but present: the schema requires it) for a multi-source sync.
      syncResult: { revision: '', revisions: synced },
    },
  };
}

describeRealOcm('multi-source revisions through the real work agent', (hubKubeconfig) => {
  const world = new OcmFleet(hubKubeconfig, 'msrc');
  const { cluster, fleet, spokeCluster } = world;
  let ocm: OcmSpoke;

  beforeAll(async () => {
    ({ ocm } = await world.setUp());
  }, 300_000);

  afterAll(async () => {
    const forbidden = await world.tearDown();
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  const hubStatus = async (name: string): Promise<Obj | undefined> =>
    (await readApp(ocm.hub, fleet.hubNamespace, name))?.status as Obj | undefined;

  test('a spoke Application with 2 revisions: the hub Application ends up with both, in source order', () =>
    ocm.track(async () => {
      // GIVEN a pull hub Application of two sources (a chart and the Git repository of its values)
      const ns = fleet.hubNamespace;
      const app: Application = hubApp('podinfo', ns, spokeCluster);
      delete app.spec.source;
      app.spec.sources = [
        {
          repoURL: 'https://stefanprodan.github.io/podinfo',
          chart: 'podinfo',
          targetRevision: CHART,
          helm: { valueFiles: ['$values/podinfo/values.yaml'] },
        },
        { repoURL: 'https://git.example/values.git', targetRevision: 'main', ref: 'values' },
      ];
      await cluster.create(app);
      await waitFor('the Application on the spoke', () => readApp(ocm.spoke, ns, 'podinfo'), WAIT);

      // WHEN the spoke Argo CD reports the app synced at one revision per source
      const t = Date.now();
      await ocm.spoke.mergePatch(APP_API, 'Application', ns, 'podinfo', {
        status: multiSourceStatus([CHART, VALUES_SHA]),
      });

      // THEN the agent reports each entry as a scalar of its own, and the feedback is in sync
      const work = await waitFor(
        'the agent to report both revisions',
        async () => {
          const w = await readWork(ocm.hub, spokeCluster, manifestWorkName(ns, 'podinfo'));
          const { values } = feedbackValues(manifestStatus(w, 'Application', ns, 'podinfo'));
          return values.syncRevisions1 === VALUES_SHA && values.operationStateSyncRevisions1 === VALUES_SHA && w;
        },
        { ...WAIT, describe: () => readWork(ocm.hub, spokeCluster, manifestWorkName(ns, 'podinfo')) },
      );
      const manifest = manifestStatus(work, 'Application', ns, 'podinfo');
      const { values, types } = feedbackValues(manifest);
      expect(values).toMatchObject({
        syncRevisions0: CHART,
        syncRevisions1: VALUES_SHA,
        operationStateSyncRevisions0: CHART,
        operationStateSyncRevisions1: VALUES_SHA,
        syncStatus: 'Synced',
      });
      expect(types.syncRevisions0).toBe('String');
      // `.status.sync.revision` is absent on a multi-source app: no value, and no error for it
      expect(values.syncRevision).toBeUndefined();
      expect(conditionOf(manifest?.conditions, 'StatusFeedbackSynced')?.status).toBe('True');

      // and the hub Application carries both lists
      const status = await waitFor(
        'the hub Application with both revisions',
        async () => {
          const s = await hubStatus('podinfo');
          return (s?.sync?.revisions as string[] | undefined)?.length === 2 &&
            (s?.operationState?.syncResult?.revisions as string[] | undefined)?.length === 2
            ? s
            : undefined;
        },
        { ...WAIT, describe: () => hubStatus('podinfo') },
      );
      report(`multi-source: spoke revisions → hub Application ${Date.now() - t} ms`);
      expect(status.sync).toStrictEqual({ status: 'Synced', revisions: [CHART, VALUES_SHA] });
      expect(status.operationState.syncResult).toStrictEqual({ revision: '', revisions: [CHART, VALUES_SHA] });
      expect(status.operationState.phase).toBe('Succeeded');

      // WHEN the spoke's lists are shorter than the sources (it has not reconciled a second source yet)
      await ocm.spoke.mergePatch(APP_API, 'Application', ns, 'podinfo', {
        status: { sync: { revisions: ['6.7.2'] }, operationState: { syncResult: { revisions: ['6.7.2'] } } },
      });
      // THEN the agent reports index 0 and every other value, and marks the out-of-range paths as an error
      const shorter = await waitFor(
        'the agent to report the shorter lists',
        async () => {
          const w = await readWork(ocm.hub, spokeCluster, manifestWorkName(ns, 'podinfo'));
          const m = manifestStatus(w, 'Application', ns, 'podinfo');
          return feedbackValues(m).values.syncRevisions0 === '6.7.2' && m;
        },
        WAIT,
      );
      const shorterValues = feedbackValues(shorter).values;
      expect(shorterValues.syncRevisions1).toBeUndefined();
      expect(shorterValues.operationStateSyncRevisions1).toBeUndefined();
      expect(shorterValues).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
      const synced = conditionOf(shorter.conditions, 'StatusFeedbackSynced');
      report(`multi-source: index past the list → StatusFeedbackSynced ${JSON.stringify(synced)}`);
      expect(synced?.status).toBe('False');
      expect(synced?.message).toContain('array index out of bounds');
      // and the hub shows what the spoke has: one revision each
      const after = await waitFor(
        'the hub Application with one revision',
        async () => {
          const s = await hubStatus('podinfo');
          return (s?.sync?.revisions as string[] | undefined)?.join() === '6.7.2' ? s : undefined;
        },
        { ...WAIT, describe: () => hubStatus('podinfo') },
      );
      expect(after.operationState.syncResult).toStrictEqual({ revision: '', revisions: ['6.7.2'] });
      expect(after.health.status).toBe('Healthy');
    }));
});
