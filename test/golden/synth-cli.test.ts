/**
 * `pullfleet synth` (npm run synth) through the real cdk8s CLI: success replaces the output folder,
 * failure leaves the previous one untouched, and the fixture fleet synthesizes to what the library renders.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { runSynth } from '../../src/cli/commands/synth.js';
import { readTree, runPlan } from '../../src/cli/commands/plan.js';
import { buildProgram } from '../../src/cli/main.js';
import { buildFleet } from '../fixtures/example-fleet.js';

const scratch: string[] = [];
// The type-check cache of these runs stays in a scratch folder.
process.env.PULLFLEET_CACHE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-cache-'));
scratch.push(process.env.PULLFLEET_CACHE_DIR);
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function project(app: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-synth-'));
  scratch.push(dir);
  fs.writeFileSync(path.join(dir, 'cdk8s.yaml'), 'language: typescript\napp: node app.mjs\noutput: dist\n');
  fs.writeFileSync(path.join(dir, 'app.mjs'), app);
  fs.mkdirSync(path.join(dir, 'dist', 'hub'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'dist', 'hub', 'previous.yaml'), 'previous: true\n');
  fs.writeFileSync(path.join(dir, 'dist', '.pullfleet'), '# manifest\nhub/previous.yaml\n');
  return dir;
}

describe('pullfleet synth', () => {
  test('GIVEN a failing fleet app WHEN synthesized THEN the previous dist/ is left untouched', async () => {
    const dir = project("console.error('fleet validation failed with 1 problem'); process.exit(1);\n");
    const result = await runSynth({ cwd: dir });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('fleet validation failed with 1 problem');
    expect(fs.readdirSync(path.join(dir, 'dist'), { recursive: true }).sort()).toStrictEqual([
      '.pullfleet',
      'hub',
      path.join('hub', 'previous.yaml'),
    ]);
    expect(fs.readFileSync(path.join(dir, 'dist', 'hub', 'previous.yaml'), 'utf8')).toBe('previous: true\n');
    expect(fs.readdirSync(dir).sort()).toStrictEqual(['app.mjs', 'cdk8s.yaml', 'dist']);
  });

  test('GIVEN a working app WHEN synthesized THEN dist/ is replaced by exactly the new output and its manifest', async () => {
    const dir = project(
      "import fs from 'node:fs'; fs.mkdirSync(process.env.CDK8S_OUTDIR + '/hub', { recursive: true }); fs.writeFileSync(process.env.CDK8S_OUTDIR + '/hub/new.yaml', 'new: true\\n');\n",
    );
    const result = await runSynth({ cwd: dir });
    expect(result.ok).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'dist'), { recursive: true }).sort()).toStrictEqual([
      '.pullfleet',
      'hub',
      path.join('hub', 'new.yaml'),
    ]);
    expect(
      fs
        .readFileSync(path.join(dir, 'dist', '.pullfleet'), 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#')),
    ).toStrictEqual(['hub/new.yaml']);
    expect(fs.readdirSync(dir).sort()).toStrictEqual(['app.mjs', 'cdk8s.yaml', 'dist']);
  });

  test('the fixture fleet, type-checked and synthesized by the cdk8s CLI in a child process, equals the in-process render', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-example-'));
    scratch.push(out);
    const result = await runSynth({
      cwd: process.cwd(),
      outdir: path.join(out, 'dist'),
      app: `${process.execPath} --import tsx test/fixtures/example-fleet.ts`,
    });
    expect(result.output).toContain('pullfleet: hub:');
    expect(result.ok).toBe(true);
    expect(result.typecheck?.errors).toStrictEqual([]);
    expect(result.typecheck?.file).toBe(path.resolve('test/fixtures/example-fleet.ts'));
    const expected = [...buildFleet().renderObjects().entries()].flatMap(([file, list]) =>
      list.map((object) => ({ file, object })),
    );
    expect(readTree(path.join(out, 'dist'))).toStrictEqual(expected);
    for (const hub of ['hub', 'acm-hub']) {
      const own = expected.filter(({ file }) => file.startsWith(`${hub}/`));
      const works = own.filter(({ object }) => object.kind === 'ManifestWork').length;
      const fileCount = [...buildFleet().renderObjects().keys()].filter((file) => file.startsWith(`${hub}/`)).length;
      expect(result.output).toContain(
        `pullfleet: ${hub}: ${own.length} objects (${works} ManifestWorks) in ${fileCount} files`,
      );
    }

    // A bare `cdk8s synth` (Fleet.synth) writes the same folder byte for byte, manifest included.
    const bare = path.join(out, 'bare');
    buildFleet({ outdir: bare }).synth();
    const files = (dir: string) =>
      (fs.readdirSync(dir, { recursive: true }) as string[])
        .filter((f) => fs.statSync(path.join(dir, f)).isFile())
        .sort();
    expect(files(bare)).toStrictEqual(files(path.join(out, 'dist')));
    for (const file of files(bare))
      expect([file, fs.readFileSync(path.join(bare, file), 'utf8')]).toStrictEqual([
        file,
        fs.readFileSync(path.join(out, 'dist', file), 'utf8'),
      ]);
    expect(files(bare)).toContain('.pullfleet');
  });

  test('plan lists a ManifestWork that a fresh synth no longer produces as a spoke deletion', async () => {
    const dir = project(
      "import fs from 'node:fs'; fs.mkdirSync(process.env.CDK8S_OUTDIR + '/hub/hub', { recursive: true }); fs.writeFileSync(process.env.CDK8S_OUTDIR + '/hub/hub/hub.yaml', 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: kept\\n');\n",
    );
    fs.mkdirSync(path.join(dir, 'dist', 'hub', 'hub', 'works'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'dist', 'hub', 'hub', 'hub.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n',
    );
    fs.writeFileSync(
      path.join(dir, 'dist', 'hub', 'hub', 'works', 'east.yaml'),
      'apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata:\n  name: argocd-web-east\n  namespace: east\nspec:\n  workload:\n    manifests:\n      - { apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: { name: web-east, namespace: argocd } }\n',
    );
    const result = await runPlan({ cwd: dir });
    expect(result.exitCode).toBe(0);
    expect(result.plan!.spokeDeletions.map((c) => c.id)).toStrictEqual(['hub/east/argocd-web-east']);
    expect(result.stdout.split('\n')[0]).toBe(
      'DELETIONS ON SPOKES (1): the work agent removes these from the spoke when the hub applies the change',
    );
    expect(fs.existsSync(path.join(dir, 'dist', 'hub', 'hub', 'works', 'east.yaml'))).toBe(true);
  });

  test('the pullfleet program registers synth, validate and plan', async () => {
    expect((await buildProgram()).commands.map((c) => c.name())).toEqual(
      expect.arrayContaining(['synth', 'validate', 'plan']),
    );
  });
});
