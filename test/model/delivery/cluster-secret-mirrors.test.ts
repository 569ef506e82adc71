/**
 * The spoke-label mirrors of a cluster Secret the controller owns (`mirrorSpokeLabels`): pure cases, then seeded
 * generated cases checked against the rules the controller relies on.
 */
import { describe, expect, test } from '@jest/globals';
import {
  isSpokeLabelMirrorKey,
  mirrorSpokeLabels,
  type SpokeLabelMirrorInput,
} from '../../../src/model/delivery/cluster-secret.js';
import { mirroredLabelKey } from '../../../src/model/delivery/per-spoke.js';
import { SeededRandom } from '../../double/fake/random.js';

const BASE = {
  'app.kubernetes.io/managed-by': 'pullfleet',
  'argocd.argoproj.io/secret-type': 'cluster',
  'pullfleet.io/controller': 'true',
};

describe('mirrorSpokeLabels', () => {
  test('GIVEN a new Secret of a cluster an ApplicationSet reading region decides WHEN the cluster has region THEN the Secret mirrors it and is selectable', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: BASE,
      clusterLabels: { region: 'eu', other: 'x' },
      readKeys: ['region'],
      requiredKeys: ['region'],
    });
    expect(mirror).toStrictEqual({
      labels: { ...BASE, 'pullfleet.io/cluster': 'c1', 'spoke.pullfleet.io/region': 'eu' },
      patch: { 'pullfleet.io/cluster': 'c1', 'spoke.pullfleet.io/region': 'eu' },
      selectable: true,
      held: [],
      missing: [],
    });
  });

  test('GIVEN a Secret already in line THEN there is no patch', () => {
    const labels = { ...BASE, 'pullfleet.io/cluster': 'c1', 'spoke.pullfleet.io/region': 'eu' };
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: labels,
      clusterLabels: { region: 'eu' },
      readKeys: ['region'],
      requiredKeys: ['region'],
    });
    expect(mirror.patch).toBeUndefined();
    expect(mirror.labels).toStrictEqual(labels);
  });

  test('GIVEN a selectable Secret WHEN the ManagedCluster label changes THEN only the mirror is patched', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: { ...BASE, 'pullfleet.io/cluster': 'c1', 'spoke.pullfleet.io/region': 'eu', team: 'a' },
      clusterLabels: { region: 'us' },
      readKeys: ['region'],
      requiredKeys: ['region'],
    });
    expect(mirror.patch).toStrictEqual({ 'spoke.pullfleet.io/region': 'us' });
    expect(mirror.labels.team).toBe('a');
  });

  test('GIVEN a prefixed key THEN its mirror keeps the prefix in front of the domain', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: BASE,
      clusterLabels: { 'topology.kubernetes.io/zone': 'a' },
      readKeys: ['topology.kubernetes.io/zone'],
      requiredKeys: ['topology.kubernetes.io/zone'],
    });
    expect(mirror.labels['topology.kubernetes.io.spoke.pullfleet.io/zone']).toBe('a');
  });

  test('GIVEN a selectable Secret WHEN the ManagedCluster loses the label THEN the mirror keeps its last value and is reported held', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: { ...BASE, 'pullfleet.io/cluster': 'c1', 'spoke.pullfleet.io/region': 'eu' },
      clusterLabels: {},
      readKeys: ['region'],
      requiredKeys: ['region'],
    });
    expect(mirror.patch).toBeUndefined();
    expect(mirror.held).toStrictEqual(['region']);
    expect(mirror.missing).toStrictEqual([]);
    expect(mirror.selectable).toBe(true);
  });

  test('GIVEN a cluster lacking a label its deciding ApplicationSet reads THEN the Secret is not made selectable and the key is missing', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: BASE,
      clusterLabels: { zone: 'a' },
      readKeys: ['region', 'zone'],
      requiredKeys: ['region', 'zone'],
    });
    expect(mirror.selectable).toBe(false);
    expect(mirror.missing).toStrictEqual(['region']);
    expect(mirror.labels).toStrictEqual({ ...BASE, 'spoke.pullfleet.io/zone': 'a' });
  });

  test('GIVEN a Secret no label-reading ApplicationSet decides THEN it mirrors what is read but is not made selectable', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: BASE,
      clusterLabels: { region: 'eu' },
      readKeys: ['region'],
    });
    expect(mirror.selectable).toBe(false);
    expect(mirror.labels).toStrictEqual({ ...BASE, 'spoke.pullfleet.io/region': 'eu' });
  });

  test('GIVEN a selectable Secret WHEN no ApplicationSet reads spoke labels any more THEN mirrors go and the cluster label stays', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: { ...BASE, 'pullfleet.io/cluster': 'c1', 'spoke.pullfleet.io/region': 'eu' },
      clusterLabels: { region: 'eu' },
      readKeys: [],
    });
    expect(mirror.patch).toStrictEqual({ 'spoke.pullfleet.io/region': null });
    expect(mirror.labels['pullfleet.io/cluster']).toBe('c1');
  });

  test('GIVEN a Secret not yet selectable WHEN the cluster loses a label THEN its mirror is removed, not held', () => {
    const mirror = mirrorSpokeLabels({
      cluster: 'c1',
      secretLabels: { ...BASE, 'spoke.pullfleet.io/region': 'eu' },
      clusterLabels: {},
      readKeys: ['region'],
      requiredKeys: ['region'],
    });
    expect(mirror.patch).toStrictEqual({ 'spoke.pullfleet.io/region': null });
    expect(mirror.held).toStrictEqual([]);
    expect(mirror.missing).toStrictEqual(['region']);
  });

  test('GIVEN a cluster name that is no label value THEN the Secret is not made selectable and the problem names the cluster', () => {
    const cluster = `c${'x'.repeat(70)}`;
    const mirror = mirrorSpokeLabels({
      cluster,
      secretLabels: BASE,
      clusterLabels: { region: 'eu' },
      readKeys: ['region'],
      requiredKeys: ['region'],
    });
    expect(mirror.selectable).toBe(false);
    expect(mirror.problem).toMatch(new RegExp(`^cluster name "${cluster}" is no label value \\(is 71 characters long`));
  });
});

// ----- generated cases -----

const KEYS = ['region', 'zone', 'topology.kubernetes.io/zone', 'env'];
const VALUES = ['eu', 'us', 'a'];

function generate(random: SeededRandom): SpokeLabelMirrorInput {
  const secretLabels: Record<string, string> = { ...BASE };
  if (random.chance(0.2)) secretLabels.team = random.pick(VALUES);
  if (random.chance(0.5)) secretLabels['pullfleet.io/cluster'] = random.chance(0.8) ? 'c1' : 'other';
  const clusterLabels: Record<string, string> = {};
  const readKeys: string[] = [];
  const requiredKeys: string[] = [];
  for (const key of KEYS) {
    if (random.chance(0.5)) secretLabels[mirroredLabelKey(key)!] = random.pick(VALUES);
    if (random.chance(0.6)) clusterLabels[key] = random.pick(VALUES);
    if (random.chance(0.5)) readKeys.push(key);
    if (readKeys.includes(key) && random.chance(0.6)) requiredKeys.push(key);
  }
  return {
    cluster: 'c1',
    secretLabels,
    clusterLabels,
    readKeys,
    ...(random.chance(0.7) ? { requiredKeys } : {}),
  };
}

/** The rules a result breaks (empty: none). */
function violations(input: SpokeLabelMirrorInput): string[] {
  const out: string[] = [];
  const mirror = mirrorSpokeLabels(input);
  const patched: Record<string, string> = { ...input.secretLabels };
  for (const [key, value] of Object.entries(mirror.patch ?? {}))
    if (value === null) delete patched[key];
    else patched[key] = value;
  if (JSON.stringify(Object.entries(patched).sort()) !== JSON.stringify(Object.entries(mirror.labels).sort()))
    out.push('the patch applied to the Secret labels does not give the labels');
  if (mirrorSpokeLabels({ ...input, secretLabels: mirror.labels }).patch !== undefined)
    out.push('a second run patches again');
  for (const [key, value] of Object.entries(input.secretLabels))
    if (!isSpokeLabelMirrorKey(key) && mirror.labels[key] !== value) out.push(`label ${key} not the mirrors' changed`);
  if (input.secretLabels['pullfleet.io/cluster'] !== undefined && mirror.labels['pullfleet.io/cluster'] === undefined)
    out.push('pullfleet.io/cluster taken away');
  for (const key of input.readKeys) {
    const mirrored = mirroredLabelKey(key)!;
    const live = input.clusterLabels[key];
    if (live !== undefined && mirror.labels[mirrored] !== live) out.push(`${mirrored} is not the live ${key}`);
    const wasSelectable = input.secretLabels['pullfleet.io/cluster'] !== undefined;
    if (live === undefined && wasSelectable && input.secretLabels[mirrored] !== undefined)
      if (mirror.labels[mirrored] !== input.secretLabels[mirrored]) out.push(`${mirrored} not held`);
  }
  for (const key of Object.keys(mirror.labels))
    if (key !== 'pullfleet.io/cluster' && isSpokeLabelMirrorKey(key))
      if (!input.readKeys.some((read) => mirroredLabelKey(read) === key)) out.push(`${key} mirrors a key nobody reads`);
  if (!input.secretLabels['pullfleet.io/cluster'] && mirror.selectable)
    for (const key of input.requiredKeys ?? [])
      if (input.clusterLabels[key] === undefined) out.push(`made selectable without ${key}`);
  return out;
}

/** Smaller cases of `input`: one read key, one cluster label or one Secret label fewer. */
function smaller(input: SpokeLabelMirrorInput): SpokeLabelMirrorInput[] {
  const out: SpokeLabelMirrorInput[] = [];
  for (const key of input.readKeys)
    out.push({
      ...input,
      readKeys: input.readKeys.filter((k) => k !== key),
      ...(input.requiredKeys ? { requiredKeys: input.requiredKeys.filter((k) => k !== key) } : {}),
    });
  for (const key of Object.keys(input.clusterLabels)) {
    const { [key]: _gone, ...rest } = input.clusterLabels;
    out.push({ ...input, clusterLabels: rest });
  }
  for (const key of Object.keys(input.secretLabels)) {
    if (key in BASE) continue;
    const { [key]: _gone, ...rest } = input.secretLabels;
    out.push({ ...input, secretLabels: rest });
  }
  return out;
}

function shrink(input: SpokeLabelMirrorInput): SpokeLabelMirrorInput {
  let best = input;
  for (let progress = true; progress;) {
    progress = false;
    for (const candidate of smaller(best))
      if (violations(candidate).length) {
        best = candidate;
        progress = true;
        break;
      }
  }
  return best;
}

test('generated cases: the patch gives the labels, a second run writes nothing, only mirrors change, the cluster label never goes, mirrors follow the live labels or hold', () => {
  const seed = Number(process.env.PULLFLEET_MIRROR_SEED ?? 20261128);
  const random = new SeededRandom(seed);
  for (let i = 0; i < 2000; i++) {
    const input = generate(random);
    if (violations(input).length === 0) continue;
    const small = shrink(input);
    throw new Error(
      `seed ${seed}, case ${i}: ${violations(small).join('; ')}\nsmallest case: ${JSON.stringify(small)}\nrerun: PULLFLEET_MIRROR_SEED=${seed}`,
    );
  }
});
