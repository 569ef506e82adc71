/**
 * Helm values round-trip: `null` survives into every rendered copy (hub Application, its ManifestWork,
 * the ApplicationSet template), and values YAML cannot hold fail validation naming the app and the key.
 */
import { describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { AppSource, Placement, PullApplication, PullApplicationSet } from '../../src/constructs/index.js';
import { find, smallFleet, synthError, type Obj } from './helpers.js';

const helm = (values: Record<string, unknown>) =>
  AppSource.helm({ repoURL: 'https://charts.example.com', chart: 'web', targetRevision: '1.0.0', values });

type Source = { helm?: { valuesObject?: unknown } };
const appValues = (app: Obj) => (app.spec as { source: Source }).source.helm?.valuesObject;

/** Every `valuesObject` anywhere in `value`. */
function valuesObjects(value: unknown): unknown[] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap(valuesObjects);
  return Object.entries(value).flatMap(([key, item]) => (key === 'valuesObject' ? [item] : valuesObjects(item)));
}

describe('Helm values', () => {
  const values = {
    resources: null,
    ingress: { enabled: true, annotations: null },
    list: [1, null, 'x'],
    text: 'a\u0085b\u007f',
  };

  test('GIVEN null values THEN the hub Application, its work and the ApplicationSet keep them, in objects and in the written YAML', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', { source: helm(values), destinationNamespace: 'web', spokes: [east] });
    new PullApplicationSet(hub, 'api', {
      source: helm(values),
      destinationNamespace: 'api',
      placement: new Placement(hub, 'everywhere'),
    });

    expect(appValues(find(fleet, 'Application', 'web-east'))).toStrictEqual(values);
    const work = find(fleet, 'ManifestWork', 'argocd-web-east', 'east') as {
      spec: { workload: { manifests: Obj[] } };
    } & Obj;
    expect(appValues(work.spec.workload.manifests[0])).toStrictEqual(values);
    const appSet = find(fleet, 'ApplicationSet', 'api') as { spec: { template: { spec: { source: Source } } } } & Obj;
    expect(appSet.spec.template.spec.source.helm?.valuesObject).toStrictEqual(values);

    const files = fleet.renderFiles();
    for (const file of ['hub/hub/applications.yaml', 'hub/hub/works/east.yaml', 'hub/hub/application-sets.yaml']) {
      const text = files.get(file)!;
      expect(text).not.toMatch(/[\u007f-\u009f]/);
      const docs = parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as Obj);
      expect(valuesObjects(docs)).toStrictEqual([values]);
    }
  });

  test('GIVEN an undefined property THEN it is left out, as in JSON', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', {
      source: helm({ a: 1, b: undefined }),
      destinationNamespace: 'web',
      spokes: [east],
    });
    expect(appValues(find(fleet, 'Application', 'web-east'))).toStrictEqual({ a: 1 });
  });

  test.each([
    ['a BigInt', { replicas: 3n }, 'app "web": Helm value values.replicas is the BigInt 3n'],
    ['NaN', { cpu: Number.NaN }, 'app "web": Helm value values.cpu is NaN'],
    [
      'Infinity',
      { limits: { memory: Number.POSITIVE_INFINITY } },
      'app "web": Helm value values.limits.memory is Infinity',
    ],
    ['-Infinity', { list: [1, Number.NEGATIVE_INFINITY] }, 'app "web": Helm value values.list[1] is -Infinity'],
    ['a function', { hook: () => 1 }, 'app "web": Helm value values.hook is a function'],
    ['a symbol', { 'odd key': Symbol('s') }, 'app "web": Helm value values["odd key"] is the symbol Symbol(s)'],
    ['undefined in an array', { list: ['a', undefined] }, 'app "web": Helm value values.list[1] is undefined'],
    ['a Map', { m: new Map() }, 'app "web": Helm value values.m is a Map'],
    [
      'a Date',
      { when: new Date(0) },
      'app "web": Helm value values.when is a Date, which YAML and Helm cannot hold: write it as a string (date.toISOString())',
    ],
  ])('fails when a value is %s, naming the app and the key', (_what, bad, message) => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', {
      source: helm(bad),
      destinationNamespace: 'web',
      spokes: [east],
    });
    const error = synthError(fleet);
    expect(error).toContain(`[hub/PullApplication:web] ${message}`);
    expect(error).toContain('nothing was written');
  });

  test('fails when values contain a cycle, and every bad value is listed in one run', () => {
    const cyclic: Record<string, unknown> = { n: Number.NaN };
    cyclic.self = cyclic;
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', { source: helm(cyclic), destinationNamespace: 'web', spokes: [east] });
    const error = synthError(fleet);
    expect(error).toContain('fleet validation failed with 2 problems');
    expect(error).toContain('Helm value values.n is NaN');
    expect(error).toContain('Helm value values.self refers back to an enclosing object (a cycle)');
  });
});
