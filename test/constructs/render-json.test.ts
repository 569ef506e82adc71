/**
 * The quick rendering of _render-json.ts against the installed cdk8s: for every object it applies to, it gives
 * exactly what `toJson()` gives (key order included), and it steps aside (undefined) for every object it cannot
 * render the same way. A failure names the cdk8s version: a cdk8s upgrade that renders differently shows here
 * (and at run time, the probe of `renderJson` switches quick rendering off).
 */
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { ApiObject, App, Chart, JsonPatch, Lazy, LazyResolver, type IResolver, type ResolutionContext } from 'cdk8s';
import { quickJson, renderJson, RenderableApiObject } from '../../src/constructs/_render-json.js';
import { apiObjectFrom, keepNulls } from '../../src/constructs/_output.js';
import { buildFleet } from '../fixtures/example-fleet.js';
import { SeededRandom } from '../double/fake/random.js';
import type { Fleet } from '../../src/constructs/index.js';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const CDK8S_VERSION = (require(require.resolve('cdk8s/package.json')) as { version: string }).version;

function apiObjects(fleet: Fleet): ApiObject[] {
  fleet.problems(); // renders the late objects
  return fleet.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c));
}

/** Why `quick` is not what cdk8s renders, naming the cdk8s version; undefined when it is. */
function mismatch(obj: ApiObject, quick: unknown): string | undefined {
  const expected = JSON.stringify(obj.toJson());
  const actual = JSON.stringify(quick);
  return expected === actual
    ? undefined
    : `cdk8s ${CDK8S_VERSION} renders ${obj.node.path} as ${expected}, the quick rendering (src/constructs/_render-json.ts) as ${actual}: update plainJson to what this cdk8s version does`;
}

describe('the quick rendering of the objects pullfleet makes', () => {
  test(`GIVEN the example fleet THEN it applies to the objects made from the model and gives exactly toJson() (cdk8s ${CDK8S_VERSION})`, () => {
    const objects = apiObjects(buildFleet());
    const quick = objects.map((obj) => ({ obj, json: quickJson(obj) }));
    const rendered = quick.filter(({ json }) => json !== undefined);
    // Objects from the model are the great majority; the controller install's typed objects render through toJson().
    expect(rendered.length).toBeGreaterThan(objects.length * 0.6);
    expect(rendered.map(({ obj, json }) => mismatch(obj, json)).filter(Boolean)).toStrictEqual([]);
  });

  test('GIVEN CDK8S_DISABLE_SORT THEN keys keep the order they were given in, as cdk8s keeps them', () => {
    const chart = new Chart(new App(), 'c');
    const obj = apiObjectFrom(chart, 'o', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'm', labels: { z: '1', a: '2' } },
      data: { zeta: '1', alpha: '2' },
    } as never);
    process.env.CDK8S_DISABLE_SORT = '1';
    try {
      const json = quickJson(obj);
      expect(Object.keys((json as { data: object }).data)).toStrictEqual(['zeta', 'alpha']);
      expect(mismatch(obj, json)).toBeUndefined();
    } finally {
      delete process.env.CDK8S_DISABLE_SORT;
    }
  });
});

describe('objects the quick rendering leaves to toJson()', () => {
  const props = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm' }, data: { a: '1' } };

  test('GIVEN an escape-hatch JSON patch THEN it steps aside, and renderJson gives the patched object', () => {
    const obj = new RenderableApiObject(new Chart(new App(), 'c'), 'o', props);
    expect(quickJson(obj)).toBeDefined();
    obj.addJsonPatch(JsonPatch.add('/data/b', '2'));
    expect(quickJson(obj)).toBeUndefined();
    expect(renderJson(obj).data).toStrictEqual({ a: '1', b: '2' });
  });

  test('GIVEN an ApiObject pullfleet did not make, a rendering of its own, or resolvers of the app THEN it steps aside', () => {
    const chart = new Chart(new App(), 'c');
    expect(quickJson(new ApiObject(chart, 'plain', props))).toBeUndefined();
    const withNull = new RenderableApiObject(chart, 'nulls', props);
    keepNulls(withNull, { values: { a: null } }); // holds a null: rendered by its own toJson
    expect(quickJson(withNull)).toBeUndefined();
    const upper: IResolver = {
      resolve: (context: ResolutionContext) => {
        if (context.value === 'x') context.replaceValue('X');
      },
    };
    const resolved = new RenderableApiObject(new Chart(new App({ resolvers: [upper, new LazyResolver()] }), 'c'), 'o', {
      ...props,
      data: { a: 'x' },
    });
    expect(quickJson(resolved)).toBeUndefined();
    expect(renderJson(resolved).data).toStrictEqual({ a: 'X' });
  });

  test('GIVEN a value that is not JSON data (a token object) THEN it steps aside, and toJson resolves it', () => {
    const token = { resolve: () => 'resolved' };
    const obj = new RenderableApiObject(new Chart(new App(), 'c'), 'o', { ...props, data: { a: token } });
    expect(quickJson(obj)).toBeUndefined();
    expect(renderJson(obj).data).toStrictEqual({ a: 'resolved' });
  });
});

/** A JSON-like value as a generated case holds it (printable; built afresh for each rendering). */
type Shape =
  | { s: string }
  | { n: number }
  | { b: boolean }
  | { null: true }
  | { undefined: true }
  | { lazy: Shape }
  | { list: Shape[] }
  | { map: Array<[string, Shape]> };

interface Case {
  readonly fields: Array<[string, Shape]>;
  readonly labels: Array<[string, string]>;
  readonly annotations: Array<[string, string]>;
  readonly finalizers: string[];
  readonly chart: { namespace?: string; labels?: Array<[string, string]> };
  readonly sort: boolean;
}

function build(shape: Shape): unknown {
  if ('s' in shape) return shape.s;
  if ('n' in shape) return shape.n;
  if ('b' in shape) return shape.b;
  if ('null' in shape) return null;
  if ('undefined' in shape) return undefined;
  if ('lazy' in shape) {
    const inner = shape.lazy;
    return Lazy.any({ produce: () => build(inner) });
  }
  if ('list' in shape) return shape.list.map(build);
  return Object.fromEntries(shape.map.map(([key, value]) => [key, build(value)]));
}

const KEYS = ['a', 'b', 'Z', 'spec', 'metadata', 'kind', 'apiVersion', '10', '2', 'x-y', 'value', 'resolve'];

function shape(random: SeededRandom, depth: number): Shape {
  const leaf = depth >= 3 || random.chance(0.4);
  if (leaf) {
    switch (random.int(0, 5)) {
      case 0:
        return { s: random.pick(['', 'x', 'long '.repeat(60), '0']) };
      case 1:
        return { n: random.pick([0, 1, -2.5, 1e21]) };
      case 2:
        return { b: random.chance(0.5) };
      case 3:
        return { null: true };
      case 4:
        return { undefined: true };
      default:
        return { map: [] };
    }
  }
  switch (random.int(0, 2)) {
    case 0:
      return { lazy: shape(random, depth + 1) };
    case 1:
      return { list: Array.from({ length: random.int(0, 3) }, () => shape(random, depth + 1)) };
    default:
      return {
        map: Array.from({ length: random.int(0, 4) }, () => [random.pick(KEYS), shape(random, depth + 1)]),
      };
  }
}

function generate(random: SeededRandom): Case {
  const pairs = (n: number): Array<[string, string]> =>
    Array.from({ length: random.int(0, n) }, () => [random.pick(['z', 'a', 'example.com/m']), random.pick(['', 'v'])]);
  return {
    fields: Array.from({ length: random.int(0, 3) }, () => [
      random.pick(['spec', 'data', 'rules', 'Zed']),
      shape(random, 0),
    ]),
    labels: pairs(2),
    annotations: pairs(2),
    finalizers: random.chance(0.3) ? ['f/b', 'f/a'] : [],
    chart: {
      ...(random.chance(0.3) ? { namespace: 'chart-ns' } : {}),
      ...(random.chance(0.3) ? { labels: pairs(2) } : {}),
    },
    sort: random.chance(0.8),
  };
}

/** The object of a case, made as pullfleet makes its objects. */
function objectOf(c: Case): ApiObject {
  const chart = new Chart(new App(), 'c', {
    ...(c.chart.namespace ? { namespace: c.chart.namespace } : {}),
    ...(c.chart.labels ? { labels: Object.fromEntries(c.chart.labels) } : {}),
  });
  const obj = new RenderableApiObject(chart, 'o', {
    apiVersion: 'example.com/v1',
    kind: 'Thing',
    metadata: { name: 'thing', ...(c.finalizers.length ? { finalizers: c.finalizers } : {}) },
    ...Object.fromEntries(c.fields.map(([key, value]) => [key, build(value)])),
  });
  for (const [key, value] of c.labels) obj.metadata.addLabel(key, value);
  for (const [key, value] of c.annotations) obj.metadata.addAnnotation(key, value);
  return obj;
}

/** The difference between the quick rendering of a case and toJson(), if any (undefined when it steps aside). */
function problem(c: Case): string | undefined {
  const before = process.env.CDK8S_DISABLE_SORT;
  if (c.sort) delete process.env.CDK8S_DISABLE_SORT;
  else process.env.CDK8S_DISABLE_SORT = '1';
  try {
    const obj = objectOf(c);
    const quick = quickJson(obj);
    return quick === undefined ? undefined : mismatch(obj, quick);
  } finally {
    if (before === undefined) delete process.env.CDK8S_DISABLE_SORT;
    else process.env.CDK8S_DISABLE_SORT = before;
  }
}

function smallerShapes(s: Shape): Shape[] {
  if ('lazy' in s) return [s.lazy, ...smallerShapes(s.lazy).map((lazy) => ({ lazy }))];
  if ('list' in s)
    return s.list.flatMap((item, i) => [
      { list: s.list.filter((_, j) => j !== i) },
      ...smallerShapes(item).map((smaller) => ({ list: s.list.map((x, j) => (j === i ? smaller : x)) })),
    ]);
  if ('map' in s)
    return s.map.flatMap(([key, value], i) => [
      { map: s.map.filter((_, j) => j !== i) },
      ...smallerShapes(value).map((smaller) => ({
        map: s.map.map((entry, j): [string, Shape] => (j === i ? [key, smaller] : entry)),
      })),
    ]);
  return [];
}

function smaller(c: Case): Case[] {
  return [
    ...c.fields.flatMap(([key, value], i) => [
      { ...c, fields: c.fields.filter((_, j) => j !== i) },
      ...smallerShapes(value).map((s) => ({
        ...c,
        fields: c.fields.map((entry, j): [string, Shape] => (j === i ? [key, s] : entry)),
      })),
    ]),
    ...(c.labels.length ? [{ ...c, labels: [] }] : []),
    ...(c.annotations.length ? [{ ...c, annotations: [] }] : []),
    ...(c.finalizers.length ? [{ ...c, finalizers: [] }] : []),
    ...(c.chart.namespace || c.chart.labels ? [{ ...c, chart: {} }] : []),
  ];
}

function shrink(c: Case): Case {
  let best = c;
  for (let progress = true; progress;) {
    progress = false;
    for (const candidate of smaller(best))
      if (problem(candidate) !== undefined) {
        best = candidate;
        progress = true;
        break;
      }
  }
  return best;
}

test(`generated objects (nulls, undefined, empty maps and lists, Lazy values, odd keys, chart labels, CDK8S_DISABLE_SORT) render exactly as cdk8s ${CDK8S_VERSION} renders them`, () => {
  const seed = Number(process.env.PULLFLEET_RENDER_SEED ?? 20261128);
  const random = new SeededRandom(seed);
  let quick = 0;
  for (let i = 0; i < 400; i++) {
    const c = generate(random);
    if (quickJson(objectOf(c)) !== undefined) quick++;
    if (problem(c) === undefined) continue;
    const small = shrink(c);
    throw new Error(
      `seed ${seed}, case ${i}: ${problem(small)}\nsmallest case: ${JSON.stringify(small)}\nrerun: PULLFLEET_RENDER_SEED=${seed}`,
    );
  }
  // The cases exercise the quick rendering, not only the objects it steps aside for.
  expect(quick).toBeGreaterThan(300);
});
