import { describe, expect, test } from '@jest/globals';
import { type Application, type ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import {
  MAX_SUMMARY_CHARS,
  RESOURCE_SUMMARY_CONDITION,
  RESOURCE_SUMMARY_HEADER,
  currentResourcesDigest,
  omittedText,
  parseResourceSummary,
  readResourceSummary,
  resourceSummaryExpression,
  resourceSummaryRule,
  resourcesDigest,
  resourcesFromStatus,
  toArgoResources,
  trimWorkSummary,
  type SummaryResource,
} from '../../../src/model/reconcile/resource-summary.js';
import { checkObject } from '../../../src/validate/schema.js';
import { evaluateCel, evaluateConditionRule } from '../../support/cel.js';
import { spokeApplication, type SpokeResource } from '../../support/spoke-apps.js';
import { applicationFeedback, workStatus } from '../../support/work-status.js';

/** The message the work agent builds for `object` with pullfleet's rule (evaluated with CEL). */
function summarise(object: Record<string, unknown>, maxChars?: number): string {
  const value = evaluateCel(resourceSummaryExpression(maxChars), { object, result: true });
  if (typeof value !== 'string') throw new Error(`the summary expression failed: ${String(value)}`);
  return value;
}

/** What the summary should list for `resources`, worked out without CEL. */
function expected(resources: readonly SpokeResource[]): SummaryResource[] {
  const rank = (r: SpokeResource) =>
    r.health === 'Degraded'
      ? 1
      : r.health === 'Missing'
        ? 2
        : r.sync === 'OutOfSync'
          ? 3
          : (r.health === 'Healthy' || r.health === undefined) && r.sync !== 'Unknown'
            ? 5
            : 4;
  return resources
    .map((r, i) => ({ r, i }))
    .sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i)
    .map(({ r }) => ({
      group: r.group ?? '',
      version: r.version,
      kind: r.kind,
      namespace: r.namespace ?? '',
      name: r.name,
      ...(r.health ? { health: r.health } : {}),
      ...(r.sync ? { sync: r.sync } : {}),
      ...(r.message && r.health !== 'Healthy' ? { message: r.message.replace(/\n/g, ' ').slice(0, 160) } : {}),
    }));
}

describe('the summary expression, evaluated with CEL', () => {
  test('GIVEN a small app WHEN summarised THEN the message lists every resource, problems first, with counts and images', () => {
    const app = spokeApplication({
      resources: 3,
      degraded: 1,
      outOfSync: 1,
      images: ['nginx:1.25', 'ghcr.io/acme/cart:2'],
    });
    const message = summarise(app.object);
    expect(message.split('\n')[0]).toBe(
      `${RESOURCE_SUMMARY_HEADER} resources=3 Healthy=2 Progressing=0 Degraded=1 Suspended=0 Missing=0 Unknown=0 none=0 OutOfSync=1 images=2`,
    );
    const summary = parseResourceSummary(message)!;
    expect(summary.resources).toStrictEqual(expected(app.resources));
    expect(summary.images).toStrictEqual(['nginx:1.25', 'ghcr.io/acme/cart:2']);
    expect(summary.omitted).toBe(0);
    expect(message.endsWith('\nend')).toBe(true);
  });

  test.each([
    [10, 1, 1, 0],
    [100, 3, 1, 5],
    [1000, 12, 4, 40],
  ])(
    'GIVEN %i resources (%i Degraded, %i Missing, %i OutOfSync) WHEN summarised THEN it stays under the condition limit and lists every problem first',
    (count, degraded, missing, outOfSync) => {
      const app = spokeApplication({ resources: count, degraded, missing, outOfSync, images: ['nginx:1.25'] });
      const message = summarise(app.object);
      expect(message.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
      expect(message.length).toBeLessThan(32_768);
      const summary = parseResourceSummary(message)!;
      // Missing resources are OutOfSync too, as Argo CD reports them.
      expect(summary.counts).toMatchObject({ total: count, degraded, missing, outOfSync: outOfSync + missing });
      const want = expected(app.resources);
      // Whatever fits is exactly the head of the problems-first order.
      expect(summary.resources).toStrictEqual(want.slice(0, summary.resources.length));
      expect(summary.resources.length + summary.omitted).toBe(count);
      const problems = degraded + missing + outOfSync;
      expect(summary.resources.length).toBeGreaterThanOrEqual(Math.min(problems, count));
    },
  );

  test('GIVEN 1,000 resources WHEN summarised THEN the message is cut, and says how many more there are and which of them are problems', () => {
    const app = spokeApplication({ resources: 1000, degraded: 5 });
    const message = summarise(app.object, 4_000);
    expect(message).toHaveLength(4_000);
    const summary = parseResourceSummary(message)!;
    expect(summary.resources.length).toBeGreaterThan(50);
    expect(summary.resources.slice(0, 5).every((r) => r.health === 'Degraded')).toBe(true);
    expect(summary.omitted).toBe(1000 - summary.resources.length);
    expect(omittedText(summary)).toBe(`and ${summary.omitted} more`);
    // Cut before every Degraded one fits: the omitted ones are named.
    const small = parseResourceSummary(summarise(app.object, 300))!;
    expect(small.resources.length).toBeLessThan(5);
    expect(omittedText(small)).toBe(
      `and ${1000 - small.resources.length} more, ${5 - small.resources.length} of them Degraded`,
    );
  });

  test('GIVEN a spoke Application without status, without resources, or with resources lacking fields WHEN summarised THEN the expression never fails', () => {
    expect(parseResourceSummary(summarise({}))).toMatchObject({ counts: { total: 0 }, resources: [], images: [] });
    expect(parseResourceSummary(summarise({ status: {} }))).toMatchObject({ counts: { total: 0 } });
    const odd = summarise({
      status: {
        resources: [
          { kind: 'ClusterRole', name: 'reader', version: 'v1', group: 'rbac.authorization.k8s.io' },
          { kind: 'Pod', name: 'p', version: 'v1', namespace: 'x', health: {} },
          {
            kind: 'Job',
            name: 'j',
            version: 'v1',
            namespace: 'x',
            status: 'Unknown',
            health: { status: 'Progressing', message: 'a\nb\nc' },
          },
        ],
        resourceHealthSource: 'appTree',
      },
    });
    const summary = parseResourceSummary(odd)!;
    expect(summary.healthSource).toBe('appTree');
    expect(summary.resources).toStrictEqual([
      {
        group: '',
        version: 'v1',
        kind: 'Job',
        namespace: 'x',
        name: 'j',
        health: 'Progressing',
        sync: 'Unknown',
        message: 'a b c',
      },
      { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', namespace: '', name: 'reader' },
      { group: '', version: 'v1', kind: 'Pod', namespace: 'x', name: 'p' },
    ]);
    expect(summary.counts).toMatchObject({ total: 3, progressing: 1, none: 2 });
  });

  test('GIVEN the rule WHEN the agent evaluates it THEN the condition is True once the Application has a status, and its message is the summary', () => {
    const rule = resourceSummaryRule();
    expect(evaluateConditionRule(rule, {}).status).toBe('False');
    const result = evaluateConditionRule(rule, spokeApplication({ resources: 2 }).object);
    expect(result).toMatchObject({ status: 'True', reason: 'ConditionRuleEvaluated' });
    expect(parseResourceSummary(result.message)?.counts.total).toBe(2);
  });
});

describe('parsing summaries', () => {
  test("fails on anything that is not a summary: the message is the agent's own", () => {
    expect(parseResourceSummary(undefined)).toBeUndefined();
    expect(parseResourceSummary("ERROR: <input>:1:5: undeclared reference to 'bind'")).toBeUndefined();
    expect(parseResourceSummary(`Manifest is ${RESOURCE_SUMMARY_CONDITION}`)).toBeUndefined();
    expect(parseResourceSummary(`${RESOURCE_SUMMARY_HEADER} resources=x`)).toBeUndefined();
  });

  test('GIVEN a message cut inside the images line THEN only whole images are kept and every resource is counted as left out', () => {
    const message = `${RESOURCE_SUMMARY_HEADER} resources=2 Healthy=2 images=3\nimages nginx:1.25 redis:7 ghcr.io/ac`;
    const summary = parseResourceSummary(message)!;
    expect(summary.images).toStrictEqual(['nginx:1.25', 'redis:7']);
    expect(summary.omitted).toBe(2);
  });
});

function workWith(conditions: ManifestWork['status'], generation = 1): ManifestWork {
  const app: Application = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'shop',
      namespace: 'argocd',
      labels: { 'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'true' },
      annotations: { 'apps.open-cluster-management.io/ocm-managed-cluster': 'spoke1' },
    },
    spec: {
      project: 'default',
      source: { repoURL: 'https://git.example/shop.git', path: 'shop', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' },
    },
  };
  const work = buildManifestWork(app);
  work.metadata.generation = generation;
  work.status = conditions;
  return work;
}

function manifestStatus(extra: Record<string, unknown>): NonNullable<ManifestWork['status']> {
  return workStatus(
    [
      {
        ...applicationFeedback({ name: 'shop', namespace: 'argocd', ordinal: 0, values: { healthStatus: 'Healthy' } }),
        ...extra,
      },
    ],
    { type: 'Available', status: 'True', reason: 'ResourcesAvailable', observedGeneration: 1 },
  );
}

describe('reading the summary from a work', () => {
  const summaryCondition = (message: string, reason = 'ConditionRuleEvaluated') => ({
    type: RESOURCE_SUMMARY_CONDITION,
    status: 'True' as const,
    reason,
    message,
  });

  test('GIVEN an agent that reported the summary on the manifest THEN it is read', () => {
    const message = summarise(spokeApplication({ resources: 2 }).object);
    const reading = readResourceSummary(
      workWith(manifestStatus({ conditions: [summaryCondition(message)] })),
      'argocd',
      'shop',
    );
    expect(reading.state).toBe('Reported');
  });

  test('GIVEN an agent that only left the aggregated copy on the work THEN it is read from there', () => {
    const message = summarise(spokeApplication({ resources: 2 }).object);
    const status = manifestStatus({});
    status.conditions!.push(summaryCondition(message, 'ConditionRulesAggregated'));
    expect(readResourceSummary(workWith(status), 'argocd', 'shop').state).toBe('Reported');
  });

  test('GIVEN an agent that rejected the rule THEN its message is the reason', () => {
    const error = "ERROR: <input>:1:1: undeclared reference to 'join'";
    const reading = readResourceSummary(
      workWith(manifestStatus({ conditions: [summaryCondition(error, 'ConditionRuleExpressionError')] })),
      'argocd',
      'shop',
    );
    expect(reading).toStrictEqual({ state: 'Rejected', message: error });
  });

  test('GIVEN an agent that reports feedback for this generation but no summary THEN it does not support the rule', () => {
    expect(readResourceSummary(workWith(manifestStatus({})), 'argocd', 'shop')).toStrictEqual({ state: 'Unsupported' });
  });

  test('GIVEN feedback from an older generation of the work THEN the summary may still come', () => {
    expect(readResourceSummary(workWith(manifestStatus({}), 2), 'argocd', 'shop')).toStrictEqual({ state: 'Pending' });
    expect(readResourceSummary(workWith(undefined), 'argocd', 'shop')).toStrictEqual({ state: 'Pending' });
  });

  test('GIVEN a work that asks for no summary THEN nothing is expected', () => {
    const work = workWith(manifestStatus({}));
    delete (work.spec.manifestConfigs![0] as { conditionRules?: unknown }).conditionRules;
    expect(readResourceSummary(work, 'argocd', 'shop')).toStrictEqual({ state: 'NotRequested' });
  });

  test('GIVEN summaries turned off on an OCM 1.0 agent, which keeps the last summary condition THEN that stale one is not read', () => {
    const message = summarise(spokeApplication({ resources: 2 }).object);
    const work = workWith(manifestStatus({ conditions: [summaryCondition(message)] }));
    delete (work.spec.manifestConfigs![0] as { conditionRules?: unknown }).conditionRules;
    expect(readResourceSummary(work, 'argocd', 'shop')).toStrictEqual({ state: 'NotRequested' });
  });

  test('the cache keeps one copy: the aggregated work condition goes when the manifest carries the same', () => {
    const message = summarise(spokeApplication({ resources: 2 }).object);
    const status = manifestStatus({ conditions: [summaryCondition(message)] });
    status.conditions!.push(summaryCondition(message, 'ConditionRulesAggregated'));
    const trimmed = trimWorkSummary(workWith(status));
    expect(trimmed.status!.conditions!.map((c) => c.type)).toStrictEqual(['Available']);
    expect(readResourceSummary(trimmed, 'argocd', 'shop').state).toBe('Reported');
    const onlyAggregated = manifestStatus({});
    onlyAggregated.conditions!.push(summaryCondition(message, 'ConditionRulesAggregated'));
    expect(trimWorkSummary(workWith(onlyAggregated)).status!.conditions).toHaveLength(2);
  });
});

describe('the hub side', () => {
  test('the summary becomes Argo CD ResourceStatus entries, and reads back the same', () => {
    const summary = parseResourceSummary(
      summarise(spokeApplication({ resources: 3, degraded: 1, missing: 1 }).object),
    )!;
    const argo = toArgoResources(summary);
    expect(argo[0]).toStrictEqual({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      namespace: 'shop',
      name: 'component-0',
      status: 'Synced',
      health: { status: 'Degraded', message: 'Deployment "component-0" exceeded its progress deadline' },
    });
    expect(resourcesFromStatus({ resources: argo })).toStrictEqual(summary.resources);
  });

  test('the digest ignores key order and empty-versus-absent lists', () => {
    const a = [{ kind: 'Service', name: 'x', version: 'v1' }];
    const b = [{ version: 'v1', name: 'x', kind: 'Service' }];
    expect(resourcesDigest(a, ['i'])).toBe(resourcesDigest(b, ['i']));
    expect(resourcesDigest([], [])).toBe(resourcesDigest(undefined, undefined));
    expect(currentResourcesDigest({ resources: b, summary: { images: ['i'] } })).toBe(resourcesDigest(a, ['i']));
    expect(resourcesDigest(a, ['j'])).not.toBe(resourcesDigest(a, ['i']));
  });

  test('every pull ManifestWork carries the rule, and still validates against the ManifestWork CRD', () => {
    const work = workWith(undefined);
    expect((work.spec.manifestConfigs![0] as { conditionRules?: unknown }).conditionRules).toStrictEqual([
      resourceSummaryRule(),
    ]);
    delete work.status;
    delete work.metadata.generation;
    expect(checkObject(work as never)).toStrictEqual([]);
  });
});
