/**
 * What pullfleet renders, delivered by OCM's real work agent (v1.3.1) from the hub to a spoke API server:
 * the static guestbook work of the example fleet, exactly as synth writes it to dist/
 * (`hub/hub/works/prod-east.yaml`), and the works the controller builds with `buildManifestWork`.
 *
 * The agent polls feedback every `--status-sync-interval` (1 s here; OCM's default is 10 s and the
 * klusterlet operator deploys it with 60 s), so the latencies measured are lower bounds for a real hub.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import {
  HUB_APP_UID_ANNOTATION,
  MANAGED_CLUSTER_ANNOTATION,
  SPEC_HASH_ANNOTATION,
  STAND_BY_ANNOTATION,
} from '../../src/model/core/keys.js';
import { FeedbackScrape, type Application, type ManifestWork } from '../../src/model/core/types.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import {
  parseResourceSummary,
  readResourceSummary,
  RESOURCE_SUMMARY_CONDITION,
} from '../../src/model/reconcile/resource-summary.js';
import {
  describeRealOcm,
  startOcmSpoke,
  WORK_AGENT_FIELD_MANAGER,
  WORK_CLEANUP_FINALIZER,
  type OcmSpoke,
} from '../support/real-ocm.js';
import { waitFor } from '../support/wait.js';
import {
  APP_API,
  argoStatus,
  conditionOf,
  expectedFeedback,
  feedbackValues,
  manifestStatus,
  payloadOf,
  raw,
  readApp,
  readWork,
  renderedGuestbookWork,
  report,
  WORK_API,
  type Obj,
} from './support.js';

const CLUSTER = 'prod-east';
const WAIT = { timeoutMs: 60_000, intervalMs: 50 };
const CONFIG_SPEC_HASH = 'open-cluster-management.io/config-spec-hash';

describeRealOcm('pullfleet works under the real work agent', (hubKubeconfig) => {
  let ocm: OcmSpoke;

  beforeAll(async () => {
    ocm = await startOcmSpoke(hubKubeconfig, { clusters: [CLUSTER] });
    report(
      `spoke API server ready in ${ocm.timings.spokeReadyMs} ms; CRDs and namespaces ${ocm.timings.crdsMs} ms; ` +
        `work agent ready (canary work Applied) ${ocm.agents.get(CLUSTER)!.readyMs} ms after spawn`,
    );
  }, 300_000);

  afterAll(async () => {
    const stopped = await ocm?.agents.get(CLUSTER)?.stop();
    if (stopped)
      report(`work agent stopped ${stopped.ms} ms after SIGTERM${stopped.killed ? ' (SIGKILL needed)' : ''}`);
    await ocm?.stop();
  }, 120_000);

  /** A hub Application as the controller reads it, pulled to CLUSTER. */
  function hubApp(name: string, annotations: Record<string, string> = {}, operation?: Obj): Application {
    return {
      apiVersion: APP_API,
      kind: 'Application',
      metadata: {
        name,
        namespace: 'argocd',
        uid: `uid-${name}`,
        labels: { 'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'true', team: 'shop' },
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: CLUSTER, ...annotations },
      },
      spec: {
        project: 'default',
        source: { repoURL: 'https://git.example/apps.git', path: name, targetRevision: 'main' },
        destination: { server: 'https://kubernetes.default.svc', namespace: name },
      },
      ...(operation ? { operation } : {}),
    };
  }

  async function deliver(work: ManifestWork): Promise<Obj> {
    const written = await ocm.hub.apply<Obj>(raw(work), 'argocd-controller');
    return waitFor(
      `work ${work.metadata.name} Applied and Available at generation ${written.metadata.generation}`,
      async () => {
        const live = await readWork(ocm.hub, CLUSTER, work.metadata.name);
        const ok = ['Applied', 'Available'].every((type) => {
          const c = conditionOf(live?.status?.conditions, type);
          return c?.status === 'True' && c.observedGeneration === written.metadata.generation;
        });
        return ok && live;
      },
      { ...WAIT, describe: async () => (await readWork(ocm.hub, CLUSTER, work.metadata.name))?.status },
    );
  }

  async function removeWork(name: string): Promise<void> {
    await ocm.hub.delete(WORK_API, 'ManifestWork', CLUSTER, name);
    await waitFor(`work ${name} gone from the hub`, async () => !(await readWork(ocm.hub, CLUSTER, name)), WAIT);
  }

  test('the dist/ work of the example fleet is applied: the spoke Application carries the payload as rendered', () =>
    ocm.track(async () => {
      // GIVEN the guestbook work synth writes for prod-east
      const work = renderedGuestbookWork();
      const payload = payloadOf(work);
      const started = Date.now();
      // WHEN the hub Argo CD applies it to the hub
      const live = await deliver(work);
      const spokeApp = await waitFor('the spoke Application', () =>
        readApp(ocm.spoke, payload.metadata.namespace!, payload.metadata.name),
      );
      report(`dist/ work applied to the spoke ${Date.now() - started} ms after the hub write (Applied+Available)`);
      // THEN the spoke Application is the payload: spec, labels and annotations as rendered, plus the
      // agent's own hash annotation (ServerSideApply with ignoreFields)
      expect(spokeApp.spec).toStrictEqual(payload.spec);
      expect(spokeApp.metadata.labels).toStrictEqual(payload.metadata.labels);
      const { [CONFIG_SPEC_HASH]: hash, ...annotations } = spokeApp.metadata.annotations as Record<string, string>;
      expect(annotations).toStrictEqual(payload.metadata.annotations);
      expect(hash).toMatch(/^[0-9a-f]{32}$/);
      expect(spokeApp.operation).toBeUndefined();
      // owned by the AppliedManifestWork (Foreground delete), written by the agent's field manager
      expect((spokeApp.metadata.ownerReferences as Obj[]).map((o) => o.kind)).toStrictEqual(['AppliedManifestWork']);
      expect((spokeApp.metadata.managedFields as Obj[]).map((f) => f.manager)).toContain(WORK_AGENT_FIELD_MANAGER);
      // and the work holds the agent's cleanup finalizer, with one manifest status naming the Application
      expect(live.metadata.finalizers).toContain(WORK_CLEANUP_FINALIZER);
      expect(manifestStatus(live, 'Application', 'argocd', payload.metadata.name)?.resourceMeta).toStrictEqual({
        group: 'argoproj.io',
        version: 'v1alpha1',
        kind: 'Application',
        resource: 'applications',
        name: payload.metadata.name,
        namespace: 'argocd',
        ordinal: 0,
      });
      await removeWork(work.metadata.name);
    }));

  test('status feedback: every JSONPath pullfleet renders and the resource summary come back to the hub', () =>
    ocm.track(async () => {
      // GIVEN a work the controller builds, applied on the spoke
      const app = hubApp('cart');
      const work = buildManifestWork(app);
      const payload = payloadOf(work);
      await deliver(work);
      // before the spoke Argo CD wrote a status: only the spec hash, and a False summary condition listing nothing
      const before = await waitFor(
        'the summary condition without a status',
        async () => {
          const w = await readWork(ocm.hub, CLUSTER, work.metadata.name);
          const m = manifestStatus(w, 'Application', 'argocd', 'cart');
          return conditionOf(m?.conditions, RESOURCE_SUMMARY_CONDITION) && m;
        },
        WAIT,
      );
      const empty = conditionOf(before.conditions, RESOURCE_SUMMARY_CONDITION);
      expect(empty).toMatchObject({ status: 'False', reason: 'ConditionRuleEvaluated' });
      expect(parseResourceSummary(empty?.message)?.counts.total).toBe(0);
      expect(feedbackValues(before).values).toStrictEqual({
        specHash: payload.metadata.annotations![SPEC_HASH_ANNOTATION],
      });

      // WHEN the spoke Argo CD writes the status of a finished forwarded sync
      const samples: number[] = [];
      for (const [sync, health, phase] of [
        ['Synced', 'Healthy', 'Succeeded'],
        ['OutOfSync', 'Progressing', 'Running'],
        ['Synced', 'Degraded', 'Failed'],
      ]) {
        const status = argoStatus({ sync, health, phase, forwardId: `fwd-${samples.length}` });
        const t = Date.now();
        const spokeApp = await ocm.spoke.mergePatch<Obj>(APP_API, 'Application', 'argocd', 'cart', { status });
        const want = expectedFeedback(spokeApp);
        // THEN the work on the hub carries every value, as Strings, and the summary
        const live = await waitFor(
          `feedback ${JSON.stringify(want)}`,
          async () => {
            const w = await readWork(ocm.hub, CLUSTER, work.metadata.name);
            const { values } = feedbackValues(manifestStatus(w, 'Application', 'argocd', 'cart'));
            return (
              JSON.stringify(values) === JSON.stringify({ ...values, ...want }) &&
              Object.keys(values).length === Object.keys(want).length &&
              w
            );
          },
          {
            ...WAIT,
            describe: async () =>
              manifestStatus(await readWork(ocm.hub, CLUSTER, work.metadata.name), 'Application', 'argocd', 'cart'),
          },
        );
        samples.push(Date.now() - t);
        const manifest = manifestStatus(live, 'Application', 'argocd', 'cart')!;
        expect(Object.keys(want)).toHaveLength(9);
        expect(new Set(Object.values(feedbackValues(manifest).types))).toStrictEqual(new Set(['String']));
        expect(conditionOf(manifest.conditions, 'StatusFeedbackSynced')?.status).toBe('True');
        // the summary is evaluated on the same sync as the values (one status write)
        const summary = await waitFor(
          'the resource summary of this status',
          async () => {
            const w = await readWork(ocm.hub, CLUSTER, work.metadata.name);
            const parsed = parseResourceSummary(
              conditionOf(manifestStatus(w, 'Application', 'argocd', 'cart')?.conditions, RESOURCE_SUMMARY_CONDITION)
                ?.message,
            );
            return parsed?.resources.find((r) => r.kind === 'Deployment')?.health === health && { w, parsed };
          },
          WAIT,
        );
        expect(summary.parsed.counts.total).toBe(2);
        expect(summary.parsed.images).toStrictEqual(['gcr.io/heptio-images/ks-guestbook-demo:0.2']);
        // pullfleet's own reader finds it, on the manifest and copied onto the work
        expect(readResourceSummary(summary.w as ManifestWork, 'argocd', 'cart')).toMatchObject({
          summary: { counts: { total: 2 } },
        });
        expect(conditionOf(summary.w!.status.conditions, RESOURCE_SUMMARY_CONDITION)).toMatchObject({
          status: 'True',
          reason: 'ConditionRulesAggregated',
        });
      }
      report(
        `status feedback spoke→hub with --status-sync-interval=${ocm.statusSyncInterval}: ${samples.map((ms) => `${ms} ms`).join(', ')}`,
      );
      await removeWork(work.metadata.name);
    }));

  test('status feedback with feedbackScrapeType Watch (the controller flag) follows spoke writes as they happen', () =>
    ocm.track(async () => {
      // GIVEN a work built for a hub on --feedback-scrape-type=Watch, applied on the spoke
      const work = buildManifestWork(hubApp('watched'), { feedbackScrapeType: FeedbackScrape.WATCH });
      expect(work.spec.manifestConfigs![0]).toMatchObject({ feedbackScrapeType: 'Watch' });
      await deliver(work);
      // WHEN the spoke Argo CD writes statuses
      const samples: number[] = [];
      for (const [sync, health, phase] of [
        ['Synced', 'Healthy', 'Succeeded'],
        ['OutOfSync', 'Degraded', 'Failed'],
        ['Synced', 'Healthy', 'Succeeded'],
      ]) {
        const revision = `watch-${samples.length}`;
        const t = Date.now();
        await ocm.spoke.mergePatch(APP_API, 'Application', 'argocd', 'watched', {
          status: argoStatus({ sync, health, phase, revision }),
        });
        // THEN each reaches the hub
        await waitFor(
          `feedback ${sync}/${health} at ${revision}`,
          async () => {
            const w = await readWork(ocm.hub, CLUSTER, work.metadata.name);
            const { values } = feedbackValues(manifestStatus(w, 'Application', 'argocd', 'watched'));
            return values.syncRevision === revision && values.healthStatus === health && values.syncStatus === sync;
          },
          WAIT,
        );
        samples.push(Date.now() - t);
      }
      report(`status feedback spoke→hub with feedbackScrapeType Watch: ${samples.map((ms) => `${ms} ms`).join(', ')}`);
      await removeWork(work.metadata.name);
    }));

  test('ignoreFields .operation (OnSpokeChange): a spoke-side edit of the operation stays, also through a re-apply', () =>
    ocm.track(async () => {
      // GIVEN a work whose payload carries a forwarded operation, applied on the spoke
      const app = hubApp(
        'orders',
        {},
        { sync: { revision: 'main' }, info: [{ name: 'pullfleet.io/forwarded', value: 'f1' }] },
      );
      const work = buildManifestWork(app);
      await deliver(work);
      const created = await readApp(ocm.spoke, 'argocd', 'orders');
      expect(created?.operation).toStrictEqual({
        sync: { revision: 'main' },
        info: [{ name: 'pullfleet.io/forwarded', value: 'f1' }],
      });
      // WHEN the spoke Argo CD finishes the sync and clears the operation (a spoke-side edit of the ignored field)
      await ocm.spoke.request('PUT', `/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/orders`, {
        body: {
          ...created,
          metadata: { ...created!.metadata, managedFields: undefined },
          operation: undefined,
          status: argoStatus({ sync: 'Synced', health: 'Healthy', phase: 'Succeeded', forwardId: 'f1' }),
        },
        query: { fieldManager: 'argocd-application-controller' },
      });
      // THEN the agent does not put it back while the payload is unchanged: a pass over the work that changes
      // only its manifest config (the agent re-applies every manifest at the new generation) skips the apply,
      // the manifest's hash being the one the spoke Application carries
      await deliver(buildManifestWork(app, { feedbackScrapeType: FeedbackScrape.POLL }));
      expect((await readApp(ocm.spoke, 'argocd', 'orders'))?.operation).toBeUndefined();

      // WHEN a user on the spoke starts a sync of their own while the work changes elsewhere (a label) and no
      // longer carries an operation (the controller dropped it once the spoke ran it)
      await ocm.spoke.mergePatch(APP_API, 'Application', 'argocd', 'orders', {
        operation: { sync: { revision: 'hotfix' }, initiatedBy: { username: 'oncall' } },
      });
      const next = buildManifestWork({
        ...app,
        operation: undefined,
        metadata: { ...app.metadata, labels: { ...app.metadata.labels, tier: 'gold' } },
      });
      await deliver(next);
      const reapplied = await waitFor(
        'the new label on the spoke',
        async () => {
          const a = await readApp(ocm.spoke, 'argocd', 'orders');
          return a?.metadata.labels?.tier === 'gold' && a;
        },
        WAIT,
      );
      // THEN the spoke's own operation stays (the agent owns no .operation any more), and so does the status
      expect(reapplied.operation).toStrictEqual({ sync: { revision: 'hotfix' }, initiatedBy: { username: 'oncall' } });
      expect(reapplied.status?.operationState?.phase).toBe('Succeeded');
      await removeWork(work.metadata.name);
    }));

  test('OnSpokeChange re-applies the payload operation on any other change of a work that still carries it', () =>
    ocm.track(async () => {
      // GIVEN a payload with an operation, applied, and cleared on the spoke by Argo CD
      const app = hubApp('search', {}, { sync: { revision: 'main' } });
      await deliver(buildManifestWork(app));
      const created = (await readApp(ocm.spoke, 'argocd', 'search'))!;
      await ocm.spoke.request('PUT', `/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/search`, {
        body: { ...created, metadata: { ...created.metadata, managedFields: undefined }, operation: undefined },
        query: { fieldManager: 'argocd-application-controller' },
      });
      // WHEN the work changes elsewhere while it still carries the operation
      const next = buildManifestWork({
        ...app,
        metadata: { ...app.metadata, labels: { ...app.metadata.labels, tier: 'gold' } },
      });
      await deliver(next);
      const reapplied = await waitFor(
        'the new label on the spoke',
        async () => {
          const a = await readApp(ocm.spoke, 'argocd', 'search');
          return a?.metadata.labels?.tier === 'gold' && a;
        },
        WAIT,
      );
      // THEN the agent applies the operation again (OnSpokeChange keeps it in the hash): the spoke would sync again
      expect(reapplied.operation).toStrictEqual({ sync: { revision: 'main' } });
      await removeWork(next.metadata.name);
    }));

  test('deleteOption Orphan (a work standing by) leaves the spoke Application; Foreground (the default) removes it', () =>
    ocm.track(async () => {
      // GIVEN two works the controller builds: one standing by (Orphan, CreateOnly), one as usual
      const orphan = buildManifestWork(hubApp('legacy', { [STAND_BY_ANNOTATION]: 'true' }));
      const regular = buildManifestWork(hubApp('payments', { [HUB_APP_UID_ANNOTATION]: 'x' }));
      expect(orphan.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
      expect(regular.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
      await deliver(orphan);
      await deliver(regular);
      const orphanApp = (await readApp(ocm.spoke, 'argocd', 'legacy'))!;
      expect(orphanApp.metadata.ownerReferences ?? []).toStrictEqual([]);
      // WHEN both works are deleted on the hub
      let t = Date.now();
      await removeWork(orphan.metadata.name);
      const orphanGoneMs = Date.now() - t;
      t = Date.now();
      await ocm.hub.delete(WORK_API, 'ManifestWork', CLUSTER, regular.metadata.name);
      // THEN the orphaned Application stays as it was, and the other one is deleted by the agent
      await waitFor(
        'the Foreground Application gone from the spoke',
        async () => !(await readApp(ocm.spoke, 'argocd', 'payments')),
        WAIT,
      );
      const appGoneMs = Date.now() - t;
      await waitFor(
        'the Foreground work gone from the hub',
        async () => !(await readWork(ocm.hub, CLUSTER, regular.metadata.name)),
        WAIT,
      );
      report(
        `delete: Orphan work gone in ${orphanGoneMs} ms; Foreground Application gone from the spoke ${appGoneMs} ms and its work from the hub ${Date.now() - t} ms after the delete`,
      );
      const left = await readApp(ocm.spoke, 'argocd', 'legacy');
      expect(left?.metadata.uid).toBe(orphanApp.metadata.uid);
      expect(left?.metadata.deletionTimestamp).toBeUndefined();
      // and no AppliedManifestWork is left for either
      const applied = await ocm.spoke.list<Obj>(WORK_API, 'AppliedManifestWork');
      expect(
        applied
          .map((a) => a.spec.manifestWorkName)
          .filter((n) => n === orphan.metadata.name || n === regular.metadata.name),
      ).toStrictEqual([]);
    }));
});
