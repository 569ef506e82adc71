/**
 * The pure side of `pullfleet init`: the files it renders, the package.json and .gitignore merges, and
 * the per-file decision (write, keep, replace with --force, merge).
 */
import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { buildProgram } from '../../../src/cli/main.js';
import {
  configFileName,
  initScripts,
  mergeGitignore,
  mergePackageJson,
  packageNameFor,
  planInit,
  renderCdk8sYaml,
  renderGitignore,
  renderPackageJson,
  renderTsconfig,
  renderWorkflow,
  WORKFLOW_FILE,
  type InitOptions,
} from '../../../src/cli/support/init-files.js';

const versions = {
  pullfleet: '1.2.3',
  peers: { cdk8s: '^2.70.0', 'cdk8s-plus-28': '^2.5.0', constructs: '^10.3.0' },
  typesNode: '^20.11.0',
};
const options: InitOptions = { name: 'platform-fleet', esm: true, versions };

describe('package.json', () => {
  test('GIVEN no package.json THEN init writes one with pullfleet at its version, the peers and the scripts', () => {
    expect(JSON.parse(renderPackageJson(options))).toStrictEqual({
      name: 'platform-fleet',
      version: '0.0.0',
      private: true,
      description: 'The fleet: hubs, spokes, placements and apps, synthesized by pullfleet into dist/',
      type: 'module',
      scripts: {
        synth: 'pullfleet synth',
        validate: 'pullfleet validate --strict',
        plan: 'pullfleet plan --fail-on-deletions --acknowledgements deletions.txt',
        test: 'pullfleet validate --strict && pullfleet plan --fail-on-deletions --acknowledgements deletions.txt',
      },
      dependencies: { cdk8s: '^2.70.0', 'cdk8s-plus-28': '^2.5.0', constructs: '^10.3.0', pullfleet: '^1.2.3' },
      devDependencies: { '@types/node': '^20.11.0' },
    });
  });

  test('GIVEN an existing package.json WHEN merged THEN missing scripts and dependencies are added and everything there is kept', () => {
    const existing = {
      name: 'acme-gitops',
      version: '3.0.0',
      type: 'module',
      workspaces: ['tools/*'],
      scripts: { test: 'jest', lint: 'eslint .' },
      dependencies: { pullfleet: 'file:../pullfleet-1.2.3.tgz', lodash: '^4.17.21' },
      devDependencies: { constructs: '10.3.0' },
    };
    const merge = mergePackageJson(JSON.stringify(existing, null, 4), options);
    expect(merge.added).toStrictEqual([
      'scripts.synth',
      'scripts.validate',
      'scripts.plan',
      'dependencies.cdk8s',
      'dependencies.cdk8s-plus-28',
      'devDependencies.@types/node',
    ]);
    expect(merge.kept).toStrictEqual(['scripts.test', 'dependencies.pullfleet', 'devDependencies.constructs']);
    expect(JSON.parse(merge.text!)).toStrictEqual({
      ...existing,
      scripts: {
        test: 'jest',
        lint: 'eslint .',
        synth: initScripts().synth,
        validate: initScripts().validate,
        plan: initScripts().plan,
      },
      dependencies: {
        cdk8s: '^2.70.0',
        'cdk8s-plus-28': '^2.5.0',
        lodash: '^4.17.21',
        pullfleet: 'file:../pullfleet-1.2.3.tgz',
      },
      devDependencies: { '@types/node': '^20.11.0', constructs: '10.3.0' },
    });
    expect(merge.text!.startsWith('{\n    "name"')).toBe(true); // the file's own indentation
  });

  test('GIVEN a package.json that has everything THEN the merge changes nothing', () => {
    const merge = mergePackageJson(renderPackageJson(options), options);
    expect(merge).toStrictEqual({ added: [], kept: [] });
  });

  test('fails when package.json is not valid JSON, not an object, or has a section that is not an object', () => {
    expect(() => mergePackageJson('{"name": "x",', options)).toThrow(
      /^package\.json is not valid JSON \(.*\): fix it, then run pullfleet init again$/,
    );
    expect(() => mergePackageJson('[]', options)).toThrow(
      'package.json must hold a JSON object: fix it, then run pullfleet init again',
    );
    expect(() => mergePackageJson('{"scripts": "make"}', options)).toThrow(
      'package.json: "scripts" must be an object: fix it, then run pullfleet init again',
    );
  });
});

describe('.gitignore', () => {
  test('GIVEN a .gitignore THEN only missing entries are appended, node_modules in any spelling counts', () => {
    expect(mergeGitignore('/node_modules\n.env')).toStrictEqual({
      text: '/node_modules\n.env\n# added by pullfleet init\n*.log\n/.dist.staging-*\n',
      added: ['*.log', '/.dist.staging-*'],
    });
    expect(mergeGitignore(renderGitignore())).toStrictEqual({ added: [] });
  });
});

describe('rendered files', () => {
  test('GIVEN a CommonJS project THEN the fleet description is fleet.config.mts everywhere', () => {
    expect(configFileName(false)).toBe('fleet.config.mts');
    expect(parse(renderCdk8sYaml(configFileName(false)))).toStrictEqual({
      language: 'typescript',
      app: 'node --import tsx fleet.config.mts',
      output: 'dist',
    });
    expect(JSON.parse(renderTsconfig(configFileName(false))).include[0]).toBe('fleet.config.mts');
    expect(parse(renderCdk8sYaml(configFileName(true))).app).toBe('node --import tsx fleet.config.ts');
  });

  test('package names come from the folder name', () => {
    expect(packageNameFor('Platform Fleet!')).toBe('platform-fleet');
    expect(packageNameFor('...')).toBe('fleet');
  });

  test('the workflow installs, validates --strict, plans pull requests into the job summary and checks dist/', () => {
    const workflow = parse(renderWorkflow()) as {
      on: Record<string, unknown>;
      jobs: { fleet: { steps: Array<{ name?: string; uses?: string; run?: string; if?: string }> } };
    };
    expect(Object.keys(workflow.on)).toStrictEqual(['push', 'pull_request']);
    const steps = workflow.jobs.fleet.steps;
    expect(steps.map((s) => s.name ?? s.uses)).toStrictEqual([
      'actions/checkout@v4',
      'actions/setup-node@v4',
      'Install',
      'Validate',
      'Plan',
      'dist/ is what synth produces',
    ]);
    expect(steps[2].run).toBe('npm ci');
    expect(steps[3].run).toBe('npx pullfleet validate --strict');
    const plan = steps[4];
    expect(plan.if).toBe("github.event_name == 'pull_request'");
    expect(plan.run).toContain(
      'npx pullfleet plan "$base/dist" $first -o text --fail-on-deletions --acknowledgements deletions.txt',
    );
    expect(plan.run).toContain('first="--first-synth"');
    expect(plan.run).toContain('>>"$GITHUB_STEP_SUMMARY"');
    expect(plan.run).toContain('exit "$status"');
    expect(steps[5].run).toContain('npx pullfleet synth -o "$RUNNER_TEMP/dist"');
    expect(steps[5].run).toContain('diff -r dist "$RUNNER_TEMP/dist"');
  });

  test('the workflow judges dist/ against the plan state it was synthesized from: the dist/ before its last change, read from the whole history', () => {
    const workflow = parse(renderWorkflow()) as {
      jobs: { fleet: { steps: Array<{ name?: string; uses?: string; run?: string; with?: Record<string, unknown> }> } };
    };
    const steps = workflow.jobs.fleet.steps;
    expect(steps[0].with).toStrictEqual({ 'fetch-depth': 0 });
    const check = steps.find((s) => s.name === 'dist/ is what synth produces')!.run!;
    expect(check).toContain('last=$(git log -1 --format=%H -- dist)');
    expect(check).toContain('git archive "$last^" dist | tar -x -C "$judged"');
    expect(check).toContain('npx pullfleet synth -o "$RUNNER_TEMP/dist" --plan-state "$judged/dist"');
  });

  test('every plan and synth flag the workflow and scripts use exists on the real commands', async () => {
    const program = await buildProgram();
    const flags = (name: string) =>
      program.commands.find((c) => c.name() === name)!.options.flatMap((o) => [o.long, o.short]);
    const used = `${renderWorkflow()}\n${Object.values(initScripts()).join('\n')}`;
    for (const [, command, args] of used.matchAll(/pullfleet (plan|synth)([^\n&|>]*)/g)) {
      for (const flag of args.match(/(?<=\s)--?[a-z-]+/g) ?? []) expect(flags(command)).toContain(flag);
    }
  });
});

describe('planInit', () => {
  const none = () => undefined;

  test('GIVEN an empty folder THEN every file is written', () => {
    expect(planInit(options, none, false).map((p) => [p.path, p.action])).toStrictEqual([
      ['package.json', 'write'],
      ['.gitignore', 'write'],
      ['tsconfig.json', 'write'],
      ['cdk8s.yaml', 'write'],
      ['fleet.config.ts', 'write'],
      ['deletions.txt', 'write'],
      [WORKFLOW_FILE, 'write'],
    ]);
  });

  test('GIVEN existing files THEN they are kept without --force, replaced with it, and package.json is merged either way', () => {
    const existing: Record<string, string> = {
      'package.json': JSON.stringify({
        name: 'x',
        type: 'module',
        dependencies: { pullfleet: 'file:./vendor/pullfleet' },
      }),
      'fleet.config.ts': '// my fleet\n',
      'cdk8s.yaml': renderCdk8sYaml(configFileName(true)),
    };
    const read = (p: string) => existing[p];
    const kept = planInit(options, read, false);
    expect(kept.find((p) => p.path === 'fleet.config.ts')).toStrictEqual({
      path: 'fleet.config.ts',
      action: 'keep',
      note: 'exists, kept as it is (--force replaces it)',
    });
    expect(kept.find((p) => p.path === 'cdk8s.yaml')!.action).toBe('unchanged');
    const forced = planInit(options, read, true);
    expect(forced.find((p) => p.path === 'fleet.config.ts')!.action).toBe('replace');
    const pkg = forced.find((p) => p.path === 'package.json')!;
    expect(pkg.action).toBe('merge');
    expect(JSON.parse(pkg.content!).dependencies.pullfleet).toBe('file:./vendor/pullfleet');
  });
});
