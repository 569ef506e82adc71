/**
 * How synth renders and writes: every object is rendered once, exactly as cdk8s renders it; a new or empty
 * output folder is written while the fleet is validated, and anything wrong leaves it as it was (missing, or
 * empty); a folder that holds files is written only once the whole fleet passed; where the time went is
 * written for `pullfleet synth --verbose`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { ApiObject, JsonPatch, Lazy } from 'cdk8s';
import {
  AppSource,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';
import { TIMINGS_FILE_ENV, type SynthTimings } from '../../src/constructs/fleet.js';
import { FleetValidationError } from '../../src/model/validation/rules.js';
import { OutputWriter, renderJson } from '../../src/constructs/_output.js';
import { buildFleet } from '../fixtures/example-fleet.js';
import { smallFleet, writeMany } from './helpers.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-output-'));
  scratch.push(dir);
  return dir;
}

/** Every path under `dir` with the content of each file. */
function snapshot(dir: string): Record<string, string> {
  if (!fs.existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const full = path.join(dir, rel);
    out[rel] = fs.statSync(full).isDirectory() ? '/' : fs.readFileSync(full, 'utf8');
  }
  return out;
}

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'guestbook' });

function apiObjects(fleet: Fleet): ApiObject[] {
  fleet.problems(); // renders the late objects
  return fleet.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c));
}

/** A fleet with two spokes that get the same app: their hub Applications and works differ only in names. */
function twinFleet(outdir: string) {
  const fleet = new Fleet({ outdir });
  const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
  const east = new Spoke(hub, 'east');
  const west = new Spoke(hub, 'west');
  const app = new PullApplication(hub, 'guestbook', {
    source,
    destinationNamespace: 'guestbook',
    spokes: [east, west],
  });
  return { fleet, hub, app };
}

function synthProblems(fleet: Fleet): string[] {
  try {
    fleet.synth();
  } catch (error) {
    expect(error).toBeInstanceOf(FleetValidationError);
    return (error as FleetValidationError).problems.map((p) => `[${p.path}] ${p.message}`);
  }
  throw new Error('expected synth to fail');
}

describe('every object is rendered exactly as cdk8s renders it', () => {
  test('GIVEN the example fleet THEN each object renders to what toJson() renders, key order included', () => {
    const objects = apiObjects(buildFleet());
    expect(objects.length).toBeGreaterThan(100);
    for (const obj of objects) expect(JSON.stringify(renderJson(obj))).toBe(JSON.stringify(obj.toJson()));
  });

  test('GIVEN escape-hatch patches, Lazy values, tokens, null Helm values and CDK8S_DISABLE_SORT THEN still the same', () => {
    const { fleet, hub, east, west } = smallFleet();
    const app = new PullApplication(hub, 'web', {
      source: AppSource.helm({
        repoURL: 'https://charts.example.com',
        chart: 'web',
        targetRevision: '1.0.0',
        values: { resources: null, list: [1, null, 'x'], empty: {} },
      }),
      destinationNamespace: 'web',
      spokes: [east, west],
    });
    new PullApplicationSet(hub, 'api', { source, destinationNamespace: 'api', placement: new Placement(hub, 'all') });
    app.manifestWork('east').addJsonPatch(JsonPatch.add('/spec/deleteOption', { propagationPolicy: 'Orphan' }));
    app.hubApplication('west').metadata.addAnnotation('example.com/when', Lazy.any({ produce: () => 'later' }));
    app.hubApplication('east').metadata.addLabel('example.com/empty', '');
    const objects = apiObjects(fleet);
    for (const sort of [undefined, '1']) {
      if (sort) process.env.CDK8S_DISABLE_SORT = sort;
      try {
        for (const obj of objects) expect(JSON.stringify(renderJson(obj))).toBe(JSON.stringify(obj.toJson()));
      } finally {
        delete process.env.CDK8S_DISABLE_SORT;
      }
    }
    const lazy = objects.find((o) => o.kind === 'Application' && o.name === 'web-west')!;
    expect((renderJson(lazy).metadata as { annotations: Record<string, string> }).annotations['example.com/when']).toBe(
      'later',
    );
  });
});

describe('the output writer', () => {
  test('GIVEN a folder that holds a file THEN it writes nothing there', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine\n');
    expect(OutputWriter.open(dir)).toBeUndefined();
  });

  test('GIVEN a missing folder WHEN discarded THEN the folder is missing again', () => {
    const dir = path.join(tmp(), 'out', 'dist');
    const writer = OutputWriter.open(dir)!;
    writer.write('hub/hub/hub.yaml', 'a: 1\n');
    writer.write('hub/bootstrap/east.yaml', 'b: 2\n');
    expect(snapshot(dir)).toStrictEqual({
      hub: '/',
      'hub/hub': '/',
      'hub/hub/hub.yaml': 'a: 1\n',
      'hub/bootstrap': '/',
      'hub/bootstrap/east.yaml': 'b: 2\n',
    });
    writer.discard();
    expect(fs.existsSync(dir)).toBe(false);
    expect(() => writer.write('hub/x.yaml', '')).toThrow('hub/x.yaml: the output was discarded');
  });

  test('GIVEN an empty folder WHEN discarded THEN it is empty again, and what others put there stays', () => {
    const dir = tmp();
    const writer = OutputWriter.open(dir)!;
    writer.write('hub/hub/hub.yaml', 'a: 1\n');
    fs.writeFileSync(path.join(dir, 'other.txt'), 'not synth\n');
    writer.discard();
    expect(snapshot(dir)).toStrictEqual({ 'other.txt': 'not synth\n' });
  });
});

describe('the output writer with a thread of its own (many files)', () => {
  /** Files of this process open under `dir` (Linux). */
  const openUnder = (dir: string) =>
    fs
      .readdirSync('/proc/self/fd')
      .map((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`);
        } catch {
          return '';
        }
      })
      .filter((target) => target.startsWith(dir));

  test('GIVEN many files, some in parts larger than one write THEN every file holds exactly what was given', () => {
    const dir = path.join(tmp(), 'dist');
    const writer = OutputWriter.open(dir)!;
    const expected = writeMany(writer);
    writer.finish();
    for (const [file, text] of Object.entries(expected))
      expect(fs.readFileSync(path.join(dir, file), 'utf8')).toBe(text);
  });

  test('GIVEN a file that cannot be written THEN finish fails naming the output and the error, and discard leaves nothing open or written', () => {
    if (!fs.existsSync('/proc/self/fd')) return; // not Linux
    const dir = path.join(tmp(), 'dist');
    const writer = OutputWriter.open(dir)!;
    writer.expect(300);
    writer.write('hub/blocked', 'a file where a folder is needed\n');
    const unfinished = writer.file('hub/open.yaml');
    unfinished.add('x'.repeat(70_000)); // written and left open
    writer.write('hub/blocked/inside.yaml', 'x: 1\n');
    expect(openUnder(dir).length).toBeLessThanOrEqual(1);
    expect(() => writer.finish()).toThrow(new RegExp(`^writing the output into ${dir} failed: E(EXIST|NOTDIR): `));
    writer.discard();
    expect(fs.existsSync(dir)).toBe(false);
    expect(openUnder(dir)).toStrictEqual([]);
  });
});

describe('synth writes nothing when anything is wrong', () => {
  test('GIVEN two works of the same shape, the second invalid, WHEN synthesized into a new folder THEN the second is reported and the folder stays missing', () => {
    const outdir = path.join(tmp(), 'dist');
    const { fleet, app } = twinFleet(outdir);
    app.manifestWork('west').addJsonPatch(JsonPatch.add('/spec/deleteOption', { propagationPolicy: 'Sometimes' }));
    const problems = synthProblems(fleet);
    expect(problems).toStrictEqual([
      expect.stringMatching(
        /^\[hub\/PullApplication:guestbook\] ManifestWork west\/argocd-guestbook-west: spec\.deleteOption\.propagationPolicy is "Sometimes", which must be one of /,
      ),
    ]);
    expect(fs.existsSync(outdir)).toBe(false);
  });

  test('GIVEN an invalid label on the second of two identical-shaped Applications WHEN synthesized into an empty folder THEN it is reported and the folder stays empty', () => {
    const outdir = tmp();
    const { fleet, app } = twinFleet(outdir);
    app.hubApplication('west').metadata.addLabel('example.com/tier', 'not valid!');
    expect(synthProblems(fleet).join('\n')).toContain('Application argocd/guestbook-west: ');
    expect(snapshot(outdir)).toStrictEqual({});
  });

  test('GIVEN a folder that holds a previous output WHEN the fleet fails THEN the folder is byte-identical', () => {
    const outdir = tmp();
    fs.mkdirSync(path.join(outdir, 'hub', 'hub'), { recursive: true });
    fs.writeFileSync(path.join(outdir, 'hub', 'hub', 'hub.yaml'), 'previous: true\n');
    const before = snapshot(outdir);
    const { fleet, app } = twinFleet(outdir);
    app.manifestWork('west').addJsonPatch(JsonPatch.add('/spec/deleteOption', { propagationPolicy: 'Sometimes' }));
    expect(synthProblems(fleet)).toHaveLength(1);
    expect(snapshot(outdir)).toStrictEqual(before);
  });

  test('GIVEN a fleet of many files (written by a thread of their own) whose last spoke is invalid THEN nothing is left', () => {
    const outdir = path.join(tmp(), 'dist');
    const fleet = new Fleet({ outdir });
    const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
    const spokes = Array.from({ length: 120 }, (_, i) => new Spoke(hub, `s${String(i).padStart(3, '0')}`));
    const app = new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes });
    app.manifestWork('s119').addJsonPatch(JsonPatch.add('/spec/deleteOption', { propagationPolicy: 'Sometimes' }));
    expect(synthProblems(fleet)).toHaveLength(1);
    expect(fs.existsSync(outdir)).toBe(false);
  });

  test('GIVEN a valid fleet THEN a new folder, an empty folder and a folder holding a previous output of it get the same files', () => {
    const root = tmp();
    const fresh = path.join(root, 'new');
    const empty = path.join(root, 'empty');
    const previous = path.join(root, 'previous');
    fs.mkdirSync(empty);
    fs.mkdirSync(path.join(previous, 'hub', 'hub'), { recursive: true });
    fs.writeFileSync(path.join(previous, 'hub', 'hub', 'applications.yaml'), 'previous: true\n');
    for (const outdir of [fresh, empty, previous]) twinFleet(outdir).fleet.synth();
    expect(snapshot(empty)).toStrictEqual(snapshot(fresh));
    expect(snapshot(previous)).toStrictEqual(snapshot(fresh));
    expect(Object.keys(snapshot(fresh)).filter((f) => f.endsWith('.yaml')).length).toBeGreaterThan(3);
  });
});

describe('where the time went', () => {
  test('GIVEN PULLFLEET_TIMINGS_FILE WHEN synthesized THEN every part is written there in milliseconds', () => {
    const root = tmp();
    const file = path.join(root, 'timings.json');
    process.env[TIMINGS_FILE_ENV] = file;
    try {
      twinFleet(path.join(root, 'dist')).fleet.synth();
    } finally {
      delete process.env[TIMINGS_FILE_ENV];
    }
    const timings = JSON.parse(fs.readFileSync(file, 'utf8')) as SynthTimings;
    expect(Object.keys(timings).sort()).toStrictEqual(
      ['constructs', 'files', 'json', 'objects', 'render', 'start', 'validate', 'write', 'yaml'].sort(),
    );
    for (const value of Object.values(timings)) expect(value).toBeGreaterThanOrEqual(0);
    expect(timings.files).toBe(
      (fs.readdirSync(path.join(root, 'dist'), { recursive: true }) as string[]).filter((f) =>
        fs.statSync(path.join(root, 'dist', f)).isFile(),
      ).length,
    );
  });
});
