/**
 * How the findings of rendered objects become fleet problems (_object-findings.ts): each reported under the
 * nearest pullfleet construct, once per construct and problem with a count of the other objects, and left out
 * when a construct already reported the offending value.
 */
import { describe, expect, test } from '@jest/globals';
import { ApiObject, App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { markKind } from '../../src/constructs/_ids.js';
import { messagesByPath, objectFindingProblems, ownerPath } from '../../src/constructs/_object-findings.js';
import type { ObjectFinding } from '../../src/model/validation/object-rules.js';

/** A chart with one pullfleet construct (`app`) owning `count` ConfigMaps, each one level down. */
function objectsOfOneOwner(count: number): { owner: Construct; objects: ApiObject[] } {
  const chart = new Chart(new App(), 'hub');
  const owner = new Construct(chart, 'app');
  markKind(owner, 'PullApplication');
  const objects = Array.from({ length: count }, (_, i) => {
    const scope = new Construct(owner, `spoke-${i}`);
    return new ApiObject(scope, 'Resource', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } });
  });
  return { owner, objects };
}

describe('ownerPath', () => {
  test('is the path of the nearest marked construct above the object', () => {
    const { owner, objects } = objectsOfOneOwner(1);
    expect(ownerPath(objects[0])).toBe(owner.node.path);
  });

  test('is the object itself when no construct above it is marked', () => {
    const obj = new ApiObject(new Chart(new App(), 'hub'), 'plain', { apiVersion: 'v1', kind: 'ConfigMap' });
    expect(ownerPath(obj)).toBe(obj.node.path);
  });
});

describe('messagesByPath', () => {
  test('groups messages by construct path, in order', () => {
    expect(
      messagesByPath([
        { path: 'hub/a', message: 'one' },
        { path: 'hub/b', message: 'two' },
        { path: 'hub/a', message: 'three' },
      ]),
    ).toStrictEqual(
      new Map([
        ['hub/a', ['one', 'three']],
        ['hub/b', ['two']],
      ]),
    );
  });
});

describe('objectFindingProblems', () => {
  const tooLong: ObjectFinding = { severity: 'error', message: 'cm-x: name "x" is too long: shorten it', value: 'x' };

  test('reports a problem repeated by several objects of one construct once, counting the others', () => {
    const { owner, objects } = objectsOfOneOwner(3);
    const found = new Map(objects.map((obj): [ApiObject, ObjectFinding[]] => [obj, [tooLong]]));
    expect(objectFindingProblems(objects, found, new Map())).toStrictEqual({
      errors: [{ path: owner.node.path, message: `${tooLong.message} (and 2 more objects made by this construct)` }],
      warnings: [],
    });
  });

  test('sorts findings into errors and warnings by severity', () => {
    const { owner, objects } = objectsOfOneOwner(1);
    const warning: ObjectFinding = { severity: 'warning', message: 'cm-0: namespace is a system one: pick another' };
    const found = new Map([[objects[0], [tooLong, warning]]]);
    expect(objectFindingProblems(objects, found, new Map())).toStrictEqual({
      errors: [{ path: owner.node.path, message: tooLong.message }],
      warnings: [{ path: owner.node.path, message: warning.message }],
    });
  });

  test('leaves out a value a construct already reported', () => {
    const { objects } = objectsOfOneOwner(2);
    const found = new Map(objects.map((obj): [ApiObject, ObjectFinding[]] => [obj, [tooLong]]));
    const reported = new Map([['hub/other', ['name "x" is not a DNS label: use a valid name']]]);
    expect(objectFindingProblems(objects, found, reported)).toStrictEqual({ errors: [], warnings: [] });
  });

  test('counts an empty value as reported only by the construct that made the object', () => {
    const { owner, objects } = objectsOfOneOwner(1);
    const empty: ObjectFinding = { severity: 'error', message: 'cm-0: label "" is empty: give a value', value: '' };
    const found = new Map([[objects[0], [empty]]]);
    const elsewhere = new Map([['hub/other', ['namespace "" is empty: give one']]]);
    expect(objectFindingProblems(objects, found, elsewhere).errors).toStrictEqual([
      { path: owner.node.path, message: empty.message },
    ]);
    const own = new Map([[owner.node.path, ['namespace "" is empty: give one']]]);
    expect(objectFindingProblems(objects, found, own).errors).toStrictEqual([]);
  });
});
