/**
 * What a resource list leaves out, as data: the text and the ResourceListTruncated message are rendered from the
 * counts, and read back by the parsers next to the writers. Seeded round trips (render → parse → the same data)
 * make any rewording of a writer fail here, instead of changing what `pullfleet status` counts as a problem.
 */
import { describe, expect, test } from '@jest/globals';
import { type Application, type ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import {
  omittedRank,
  omittedText,
  omittedView,
  parseOmittedText,
  parseTruncatedListMessage,
  truncatedListMessage,
  type OmittedResources,
  type TruncatedResourceList,
} from '../../../src/model/reconcile/omitted-resources.js';
import {
  MAX_SUMMARY_CHARS,
  RESOURCE_LIST_TRUNCATED_CONDITION,
  RESOURCE_SUMMARY_CONDITION,
  RESOURCE_SUMMARY_HEADER,
  readResourceSummary,
} from '../../../src/model/reconcile/resource-summary.js';
import { appResourcesFromApplication, appResourcesFromWork } from '../../../src/model/reconcile/resource-views.js';
import { computeApplicationStatus } from '../../../src/model/reconcile/status.js';
import { SeededRandom } from '../../double/fake/random.js';
import { WorkAgent } from '../../support/work-agent.js';
import { pullApplication } from '../../support/world.js';

const NOW = new Date('2026-03-01T12:00:00Z');

function generateOmitted(random: SeededRandom): OmittedResources {
  const count = () => (random.chance(0.5) ? 0 : random.int(1, random.pick([9, 999, 99_999])));
  return {
    omitted: random.int(1, 100_000),
    omittedDegraded: count(),
    omittedMissing: count(),
    omittedOutOfSync: count(),
  };
}

function generateList(random: SeededRandom): TruncatedResourceList {
  const omitted = generateOmitted(random);
  const listed = random.int(0, 2_000);
  return {
    listed,
    total: listed + omitted.omitted,
    capChars: random.pick([MAX_SUMMARY_CHARS, 300, 4_000]),
    ...omitted,
  };
}

/** Every case of `generate` whose round trip through `render` and `parse` loses data: fails naming seed and case. */
function expectRoundTrips<T>(
  name: string,
  generate: (random: SeededRandom) => T,
  render: (data: T) => string | undefined,
  parse: (text: string) => T | undefined,
): void {
  const seed = Number(process.env.PULLFLEET_OMITTED_SEED ?? 20261128);
  const random = new SeededRandom(seed).fork(name);
  for (let i = 0; i < 3_000; i++) {
    const data = generate(random);
    const text = render(data);
    const back = text === undefined ? undefined : parse(text);
    if (JSON.stringify(back) !== JSON.stringify(data))
      throw new Error(
        `seed ${seed}, case ${i}: ${JSON.stringify(data)} rendered as ${JSON.stringify(text)} parsed back as ${JSON.stringify(back)}\nrerun: PULLFLEET_OMITTED_SEED=${seed}`,
      );
  }
}

describe('what a resource list leaves out, rendered from data and read back', () => {
  test('generated cases: the text of the left-out resources parses back to the counts it was rendered from', () => {
    expectRoundTrips('text', generateOmitted, omittedText, parseOmittedText);
  });

  test('generated cases: the ResourceListTruncated message parses back to the list it was rendered from', () => {
    expectRoundTrips('message', generateList, truncatedListMessage, parseTruncatedListMessage);
  });

  test.each([
    ['and 12 more', { rank: 5, problems: false }],
    ['and 12 more, 3 of them Degraded, 1 Missing, 5 OutOfSync', { rank: 1, problems: true }],
    ['and 12 more, 1 of them Missing, 5 OutOfSync', { rank: 2, problems: true }],
    ['and 12 more, 5 of them OutOfSync', { rank: 3, problems: false }],
  ])('GIVEN "%s" THEN the rank and whether it is a problem come from the counts', (text, expected) => {
    const counts = parseOmittedText(text)!;
    expect(omittedRank(counts)).toStrictEqual(expected);
    expect(omittedView(counts)).toStrictEqual({ text, ...expected });
  });

  test.each([
    'and 0 more',
    'and 12 more, 0 of them Degraded',
    'and 12 more, 1 of them Missing, 2 Degraded',
    'and 12 more, 1 of them Degraded, 2 Degraded',
    'and 12 more, 3 of them Unknown',
    '12 more',
    'and 12 more.',
  ])('GIVEN "%s", which the writer never renders, THEN it does not parse', (text) => {
    expect(parseOmittedText(text)).toBeUndefined();
    expect(
      parseTruncatedListMessage(
        `status.resources lists 3 of 15 resources, problems first (the spoke's summary is capped at 30000 characters): ${text}`,
      ),
    ).toBeUndefined();
  });

  test('GIVEN nothing left out THEN there is no text and no view', () => {
    const none = { omitted: 0, omittedDegraded: 0, omittedMissing: 0, omittedOutOfSync: 0 };
    expect(omittedText(none)).toBeUndefined();
    expect(omittedView(none)).toBeUndefined();
  });
});

describe('the hub Application path and the ManifestWork path give the same view of what is left out', () => {
  const agent = new WorkAgent(undefined as never, () => NOW);
  const hubApp: Application = pullApplication({
    name: 'shop',
    spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } },
  });

  /** A work whose summary, cut for size, lists two Degraded Deployments of `total` resources. */
  function cutWork(header: string): ManifestWork {
    const work = buildManifestWork(hubApp);
    work.metadata.generation = 1;
    work.status = agent.statusFor(
      work,
      { healthStatus: 'Degraded', syncStatus: 'OutOfSync' },
      {
        spokeApplication: { status: {} },
      },
    );
    const manifest = work.status.resourceStatus!.manifests![0];
    const message = `${RESOURCE_SUMMARY_HEADER} ${header}\nimages \nD- apps/v1/Deployment/shop/a\nDO apps/v1/Deployment/shop/b\nD- apps/v1/Depl`;
    // A new condition object: summaries are parsed once per object.
    manifest.conditions = manifest.conditions!.map((c) =>
      c.type === RESOURCE_SUMMARY_CONDITION ? { ...c, message } : c,
    );
    return work;
  }

  test.each([
    ['resources=4000 Healthy=3000 Degraded=1000 OutOfSync=7 images=0', 1, true],
    ['resources=4000 Healthy=3996 Degraded=2 Missing=2 OutOfSync=1 images=0', 2, true],
    ['resources=4000 Healthy=3998 Degraded=2 OutOfSync=3 images=0', 3, false],
    ['resources=4000 Healthy=3998 Degraded=2 OutOfSync=1 images=0', 5, false],
  ])(
    'GIVEN a summary "%s" THEN the condition the controller writes reads back as the counts of the work',
    (header, rank, problems) => {
      const work = cutWork(header);
      const reading = readResourceSummary(work, 'argocd', 'shop');
      if (reading.state !== 'Reported') throw new Error(`summary not reported: ${reading.state}`);
      const { desired } = computeApplicationStatus({ app: hubApp, work, now: NOW, staleAfterMs: 0 });
      const message = desired.conditions!.find((c) => c.type === RESOURCE_LIST_TRUNCATED_CONDITION)!.message;
      expect(parseTruncatedListMessage(message)).toStrictEqual({
        listed: 2,
        total: 4000,
        capChars: MAX_SUMMARY_CHARS,
        omitted: reading.summary.omitted,
        omittedDegraded: reading.summary.omittedDegraded,
        omittedMissing: reading.summary.omittedMissing,
        omittedOutOfSync: reading.summary.omittedOutOfSync,
      });
      const fromWork = appResourcesFromWork(work)!.omitted;
      const fromApp = appResourcesFromApplication({ ...hubApp, status: desired }, 'spoke1').omitted;
      expect(fromWork).toMatchObject({ rank, problems });
      expect(fromApp).toStrictEqual(fromWork);
    },
  );

  test('GIVEN a ResourceListTruncated message in words this version does not write (a newer controller) THEN it is shown as it is, needing attention but no problem', () => {
    const message = 'status.resources shows 2 of 4000 resources; 3998 are not listed, 998 of them Degraded';
    const app: Application = {
      ...hubApp,
      status: { resources: [], conditions: [{ type: RESOURCE_LIST_TRUNCATED_CONDITION, message }] },
    };
    expect(appResourcesFromApplication(app, 'spoke1').omitted).toStrictEqual({
      text: message,
      rank: 4,
      problems: false,
    });
  });
});
