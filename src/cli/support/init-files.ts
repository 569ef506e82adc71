/**
 * What `pullfleet init` writes, as pure functions: the files of a new fleet repository, the merge of an
 * existing package.json (and .gitignore), and the decision per file (write, replace, merge, keep).
 * src/cli/commands/init.ts reads the folder and writes the result; nothing here touches the filesystem.
 */
import semver from 'semver';
import { sortKeys } from '../../model/core/records.js';

/** Versions the generated package.json depends on. */
export interface InitVersions {
  /** The pullfleet version running init (the dependency is `^<version>`). */
  readonly pullfleet: string;
  /** pullfleet's peer dependencies (cdk8s, cdk8s-plus-*, constructs) with their ranges. */
  readonly peers: Readonly<Record<string, string>>;
  /** Range of @types/node for the fleet's tsconfig.json. */
  readonly typesNode: string;
}

export interface InitOptions {
  /** Package name for a new package.json. */
  readonly name: string;
  readonly versions: InitVersions;
  /** Whether the fleet is an ES module project (`"type": "module"`); otherwise the config is fleet.config.mts. */
  readonly esm: boolean;
}

/** The workflow file init writes. */
export const WORKFLOW_FILE = '.github/workflows/pullfleet.yml';
/** The acknowledged-deletions file `plan --fail-on-deletions --acknowledgements` reads. */
export const ACKNOWLEDGEMENTS_FILE = 'deletions.txt';

/** The scripts init adds to package.json. */
export function initScripts(): Record<string, string> {
  return {
    synth: 'pullfleet synth',
    validate: 'pullfleet validate --strict',
    plan: `pullfleet plan --fail-on-deletions --acknowledgements ${ACKNOWLEDGEMENTS_FILE}`,
    test: `pullfleet validate --strict && pullfleet plan --fail-on-deletions --acknowledgements ${ACKNOWLEDGEMENTS_FILE}`,
  };
}

/** Runtime dependencies of a fleet repository: pullfleet and its peers. */
export function initDependencies(versions: InitVersions): Record<string, string> {
  return { pullfleet: `^${versions.pullfleet}`, ...versions.peers };
}

/** Name of the fleet description file. */
export function configFileName(esm: boolean): string {
  return esm ? 'fleet.config.ts' : 'fleet.config.mts';
}

/**
 * The fleet description init points cdk8s.yaml at: the user's own file when one exists
 * (fleet.config.mts, or fleet.config.ts in an ES module package), else the one init writes.
 */
export function chooseConfigFile(esm: boolean, existing: (path: string) => string | undefined): string {
  if (existing('fleet.config.mts') !== undefined) return 'fleet.config.mts';
  if (esm && existing('fleet.config.ts') !== undefined) return 'fleet.config.ts';
  return configFileName(esm);
}

/** The version of `name` installed in the folder's node_modules, if any. */
function installedVersion(existing: (path: string) => string | undefined, name: string): string | undefined {
  try {
    const manifest = JSON.parse(existing(`node_modules/${name}/package.json`) ?? 'null') as {
      version?: unknown;
    } | null;
    return typeof manifest?.version === 'string' && semver.valid(manifest.version) ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

/** .gitignore patterns that would keep dist/ out of git. */
const IGNORES_DIST = new Set(['dist', 'dist/', '/dist', '/dist/', 'dist/*', '/dist/*', 'dist/**', '/dist/**']);

/**
 * What in an existing folder would make the fleet repository init writes fail, each with its fix:
 * a fleet.config.ts that a package without `"type": "module"` cannot run as an ES module, peer
 * dependencies pinned to ranges pullfleet cannot use (npm install would fail with ERESOLVE), and a
 * .gitignore that ignores dist/ (committed, and checked in CI). Empty when there is nothing to fix.
 */
export function findInitConflicts(options: InitOptions, existing: (path: string) => string | undefined): string[] {
  const conflicts: string[] = [];
  if (!options.esm && existing('fleet.config.mts') === undefined && existing('fleet.config.ts') !== undefined) {
    conflicts.push(
      'fleet.config.ts exists, but package.json has no "type": "module", so Node would not run it as the ES module a fleet description is: ' +
        'add "type": "module" to package.json, or rename the file to fleet.config.mts',
    );
  }
  const pkgText = existing('package.json');
  if (pkgText !== undefined) {
    let pkg: unknown;
    try {
      pkg = JSON.parse(pkgText);
    } catch {
      pkg = undefined; // planInit reports an unreadable package.json
    }
    if (isRecord(pkg)) {
      for (const [name, wanted] of Object.entries(options.versions.peers)) {
        for (const section of ['dependencies', 'devDependencies', 'optionalDependencies']) {
          const have = isRecord(pkg[section]) ? pkg[section][name] : undefined;
          if (typeof have !== 'string' || have === wanted) continue;
          if (semver.validRange(have) === null || semver.validRange(wanted) === null) continue;
          if (!semver.intersects(have, wanted)) {
            conflicts.push(
              `package.json ${section}.${name} is "${have}", and pullfleet ${options.versions.pullfleet} needs ${name} ${wanted} (npm install would fail with ERESOLVE): run npm install ${name}@"${wanted}", or change the range in package.json`,
            );
            continue;
          }
          // The range allows a good version, but the one installed (and locked) is older.
          const installed = installedVersion(existing, name);
          if (installed !== undefined && !semver.satisfies(installed, wanted)) {
            conflicts.push(
              `${name} ${installed} is installed (package.json ${section}.${name} is "${have}"), and pullfleet ${options.versions.pullfleet} needs ${name} ${wanted} (npm install would fail with ERESOLVE): run npm install ${name}@"${wanted}"`,
            );
          }
        }
      }
    }
  }
  const gitignore = existing('.gitignore');
  if (gitignore !== undefined) {
    gitignore.split(/\r?\n/).forEach((line, index) => {
      if (IGNORES_DIST.has(line.trim())) {
        conflicts.push(
          `.gitignore line ${index + 1} ("${line.trim()}") ignores dist/, which a fleet repository commits (the CI check compares it with a fresh synth): remove that line`,
        );
      }
    });
  }
  return conflicts;
}

/** A package name from a folder name: lower case, URL-safe characters, at most 214 characters. */
export function packageNameFor(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '')
    .slice(0, 214);
  return name === '' ? 'fleet' : name;
}

/** A new package.json (text). */
export function renderPackageJson(options: InitOptions): string {
  const pkg = {
    name: options.name,
    version: '0.0.0',
    private: true,
    description: 'The fleet: hubs, spokes, placements and apps, synthesized by pullfleet into dist/',
    type: 'module',
    scripts: initScripts(),
    dependencies: sortKeys(initDependencies(options.versions)),
    devDependencies: { '@types/node': options.versions.typesNode },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

export interface PackageJsonMerge {
  /** The merged package.json (text), or undefined when nothing needs adding. */
  readonly text?: string;
  /** What was added (`scripts.synth`, `dependencies.cdk8s`, …). */
  readonly added: string[];
  /** What was already there with another value and was kept (`scripts.test`, `dependencies.pullfleet`). */
  readonly kept: string[];
}

type JsonRecord = Record<string, unknown>;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Merges init's scripts and dependencies into an existing package.json. Adds what is missing; keeps
 * every existing field and value (a pullfleet dependency on a tarball, path or other range included).
 * A dependency already listed in dependencies, devDependencies or optionalDependencies is not added
 * again. Throws, naming the file and the fix, when the text is not a JSON object or a section
 * init adds to is not an object.
 */
export function mergePackageJson(text: string, options: InitOptions, file = 'package.json'): PackageJsonMerge {
  let pkg: unknown;
  try {
    pkg = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${(error as Error).message}): fix it, then run pullfleet init again`);
  }
  if (!isRecord(pkg)) throw new Error(`${file} must hold a JSON object: fix it, then run pullfleet init again`);
  for (const section of ['scripts', 'dependencies', 'devDependencies', 'optionalDependencies']) {
    if (pkg[section] !== undefined && !isRecord(pkg[section]))
      throw new Error(`${file}: "${section}" must be an object: fix it, then run pullfleet init again`);
  }
  const merged: JsonRecord = { ...pkg };
  const added: string[] = [];
  const kept: string[] = [];
  const scripts: JsonRecord = { ...((pkg.scripts as JsonRecord | undefined) ?? {}) };
  for (const [name, command] of Object.entries(initScripts())) {
    if (scripts[name] === undefined) {
      scripts[name] = command;
      added.push(`scripts.${name}`);
    } else if (scripts[name] !== command) {
      kept.push(`scripts.${name}`);
    }
  }
  const listed = (name: string) =>
    ['dependencies', 'devDependencies', 'optionalDependencies'].find(
      (s) => isRecord(pkg[s]) && pkg[s][name] !== undefined,
    );
  const dependencies: JsonRecord = { ...((pkg.dependencies as JsonRecord | undefined) ?? {}) };
  for (const [name, range] of Object.entries(initDependencies(options.versions))) {
    const section = listed(name);
    if (section === undefined) {
      dependencies[name] = range;
      added.push(`dependencies.${name}`);
    } else if ((pkg[section] as JsonRecord)[name] !== range) {
      kept.push(`${section}.${name}`);
    }
  }
  const devDependencies: JsonRecord = { ...((pkg.devDependencies as JsonRecord | undefined) ?? {}) };
  if (listed('@types/node') === undefined) {
    devDependencies['@types/node'] = options.versions.typesNode;
    added.push('devDependencies.@types/node');
  }
  if (added.length === 0) return { added, kept };
  if (added.some((a) => a.startsWith('scripts.'))) merged.scripts = scripts;
  if (added.some((a) => a.startsWith('dependencies.')))
    merged.dependencies = sortKeys(dependencies as Record<string, string>);
  if (added.some((a) => a.startsWith('devDependencies.')))
    merged.devDependencies = sortKeys(devDependencies as Record<string, string>);
  const indent = /^[{[]\r?\n(\s+)/.exec(text)?.[1] ?? '  ';
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  return { text: `${JSON.stringify(merged, null, indent).replace(/\n/g, newline)}${newline}`, added, kept };
}

/** Entries init wants in .gitignore. */
export const GITIGNORE_ENTRIES = ['node_modules/', '*.log', '/.dist.staging-*'];

/** A new .gitignore. */
export function renderGitignore(): string {
  return `# dependencies, logs, and the staging folders of an interrupted pullfleet synth\n${GITIGNORE_ENTRIES.join('\n')}\n`;
}

/** An existing .gitignore with init's missing entries appended (nothing removed), or undefined when none is missing. */
export function mergeGitignore(text: string): { text?: string; added: string[] } {
  const present = new Set(text.split(/\r?\n/).map((line) => line.trim()));
  const equivalent: Record<string, string[]> = {
    'node_modules/': ['node_modules', '/node_modules', '/node_modules/', 'node_modules/'],
  };
  const added = GITIGNORE_ENTRIES.filter((entry) => !(equivalent[entry] ?? [entry]).some((e) => present.has(e)));
  if (added.length === 0) return { added };
  const separator = text === '' || text.endsWith('\n') ? '' : '\n';
  return { text: `${text}${separator}# added by pullfleet init\n${added.join('\n')}\n`, added };
}

/** tsconfig.json of the fleet (`configFile` is the fleet description): strict, ES modules as Node runs them, no output (tsx runs the config). */
export function renderTsconfig(configFile: string): string {
  const config = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022'],
      types: ['node'],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    },
    include: [configFile, 'src/**/*.ts', 'src/**/*.mts'],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** cdk8s.yaml: the command that runs the fleet description `config`, and the output folder. */
export function renderCdk8sYaml(config: string): string {
  return [
    '# `pullfleet synth` type-checks the fleet description, runs `app` and writes `output` through a staging',
    '# folder, so a failed synth leaves dist/ as it was.',
    'language: typescript',
    `app: node --import tsx ${config}`,
    'output: dist',
    '',
  ].join('\n');
}

/** A small fleet in the public import style: one hub, one cluster set, one spoke, one app. */
export function renderFleetConfig(): string {
  return `/**
 * The fleet: hubs, spokes, cluster sets, placements and the apps delivered to them.
 * \`npm run synth\` type-checks this file and writes dist/ (commit it); \`npm run plan\` shows what a
 * change does to the committed dist/ before it is merged.
 */
import { AppSource, ClusterSet, Fleet, Hub, Placement, PullApplication, Spoke } from 'pullfleet';

const fleet = new Fleet();
const hub = new Hub(fleet, 'hub', { argoNamespace: 'argocd' });

// Clusters join the cluster set through OCM's exclusive cluster-set label.
const prod = new ClusterSet(hub, 'prod');
new Spoke(hub, 'prod-east', { clusterSet: prod, labels: { env: 'prod', region: 'us-east-1' } });

const allProd = new Placement(hub, 'all-prod', {
  clusterSets: [prod],
  predicates: [{ labels: { env: 'prod' } }],
});

new PullApplication(hub, 'guestbook', {
  source: AppSource.git({
    repoURL: 'https://github.com/argoproj/argocd-example-apps.git',
    path: 'guestbook',
    targetRevision: 'HEAD',
  }),
  destinationNamespace: 'guestbook',
  placement: allProd,
  resources: [
    { apiGroup: '', resources: ['services'] },
    { apiGroup: 'apps', resources: ['deployments'] },
  ],
});

// Validates the whole fleet, then writes dist/. Under \`pullfleet synth\` a problem ends the run with the
// list of every problem (no stack trace) and exit code 1; nothing is written.
fleet.synth();
`;
}

/** The acknowledged-deletions file: empty, with how to use it. */
export function renderAcknowledgements(): string {
  return [
    '# Deletions on spokes that were reviewed and may happen, one id per line as `pullfleet plan` lists it',
    '# (`*` matches any characters), for example: hub/prod-east/argocd-guestbook-prod-east',
    '# `npm run plan` and the pull-request check fail on any deletion not listed here. Remove the lines',
    '# again once the change is merged.',
    '',
  ].join('\n');
}

/**
 * The GitHub Actions workflow: install, validate --strict, on pull requests the plan against the
 * base branch's dist/ (job summary; unacknowledged deletions on spokes fail the job), and a check that
 * the committed dist/ is exactly what synth produces, judged against the plan state it was synthesized
 * from (the dist/ before the commit that last changed it).
 */
export function renderWorkflow(): string {
  return `# Written by pullfleet init. Checks every push and pull request of the fleet repository.
name: pullfleet

on:
  push:
    branches: [main]
  pull_request:

permissions:
  contents: read

jobs:
  fleet:
    runs-on: ubuntu-latest
    timeout-minutes: 15
    steps:
      - uses: actions/checkout@v4
        with:
          # the check below reads the dist/ of the commit before the last change of dist/
          fetch-depth: 0
      - uses: actions/setup-node@v4
        with:
          node-version: 20
          cache: npm
      - name: Install
        run: npm ci

      - name: Validate
        run: npx pullfleet validate --strict

      # The plan compares the base branch's dist/ with a fresh synth of this branch, so reviewers see
      # what merging changes on the hubs and spokes. It goes to the job summary; a deletion on a
      # spoke fails the job unless its id is listed in ${ACKNOWLEDGEMENTS_FILE}. Only a base branch
      # without dist/ (the fleet's first synth) is planned with --first-synth.
      - name: Plan
        if: github.event_name == 'pull_request'
        env:
          BASE_REF: \${{ github.base_ref }}
        run: |
          base="$RUNNER_TEMP/base"
          mkdir -p "$base"
          git fetch --no-tags --depth=1 origin "$BASE_REF"
          first=""
          if git cat-file -e FETCH_HEAD:dist 2>/dev/null; then
            git archive FETCH_HEAD dist | tar -x -C "$base"
          else
            first="--first-synth"
          fi
          status=0
          npx pullfleet plan "$base/dist" $first -o text --fail-on-deletions --acknowledgements ${ACKNOWLEDGEMENTS_FILE} \\
            >"$RUNNER_TEMP/plan.txt" 2>"$RUNNER_TEMP/plan.err" || status=$?
          {
            echo "## pullfleet plan against $BASE_REF"
            echo
            echo '\`\`\`text'
            cat "$RUNNER_TEMP/plan.txt" "$RUNNER_TEMP/plan.err"
            echo '\`\`\`'
          } >>"$GITHUB_STEP_SUMMARY"
          cat "$RUNNER_TEMP/plan.txt"
          cat "$RUNNER_TEMP/plan.err" >&2
          exit "$status"

      # A move between delivery models is judged against the plan state dist/ was synthesized from: the
      # dist/ before the commit that last changed it. Judged against none, synth would render the model
      # moved to, without the step committed; judged against dist/'s own, the next step.
      - name: dist/ is what synth produces
        run: |
          judged="$RUNNER_TEMP/judged"
          mkdir -p "$judged/dist"
          last=$(git log -1 --format=%H -- dist)
          if [ -n "$last" ] && git cat-file -e "$last^:dist" 2>/dev/null; then
            git archive "$last^" dist | tar -x -C "$judged"
          fi
          npx pullfleet synth -o "$RUNNER_TEMP/dist" --plan-state "$judged/dist" >/dev/null
          if ! diff -r dist "$RUNNER_TEMP/dist"; then
            echo "::error::dist/ differs from a fresh synth: run npm run synth and commit dist/"
            exit 1
          fi
`;
}

/** What init does with one file. */
export type InitAction = 'write' | 'replace' | 'merge' | 'keep' | 'unchanged';

export interface InitFilePlan {
  /** Path relative to the fleet folder (forward slashes). */
  readonly path: string;
  readonly action: InitAction;
  /** The content to write (write, replace, merge). */
  readonly content?: string;
  /** One line for the user: what happens and why. */
  readonly note: string;
}

/**
 * Decides, for every file init writes, what happens given what exists (`existing(path)` returns the
 * current text, or undefined when there is no such file). Existing files are kept unless `force`;
 * package.json and .gitignore are merged (additions only) even without `force`. Throws on an
 * existing package.json init cannot read; nothing has been written then.
 */
export function planInit(
  options: InitOptions,
  existing: (path: string) => string | undefined,
  force: boolean,
): InitFilePlan[] {
  const plans: InitFilePlan[] = [];
  const pkgText = existing('package.json');
  if (pkgText === undefined) {
    plans.push({
      path: 'package.json',
      action: 'write',
      content: renderPackageJson(options),
      note: 'pullfleet, its peer dependencies and the scripts synth, validate, plan, test',
    });
  } else {
    const merge = mergePackageJson(pkgText, options);
    const kept = merge.kept.length > 0 ? `; kept as they were: ${merge.kept.join(', ')}` : '';
    plans.push(
      merge.text === undefined
        ? { path: 'package.json', action: 'unchanged', note: `has everything init adds${kept}` }
        : {
            path: 'package.json',
            action: 'merge',
            content: merge.text,
            note: `added ${merge.added.join(', ')}${kept}`,
          },
    );
  }
  const config = chooseConfigFile(options.esm, existing);
  const fixed: Array<[string, string, string]> = [
    ['tsconfig.json', renderTsconfig(config), 'strict, NodeNext modules, no output'],
    ['cdk8s.yaml', renderCdk8sYaml(config), `app runs ${config}, output dist`],
    [config, renderFleetConfig(), 'a small fleet importing from pullfleet (one hub, spoke, placement, app)'],
    [ACKNOWLEDGEMENTS_FILE, renderAcknowledgements(), 'reviewed deletions plan may make (none yet)'],
    [WORKFLOW_FILE, renderWorkflow(), 'GitHub Actions: npm ci, validate --strict, plan on pull requests, dist/ check'],
  ];
  const gitignore = existing('.gitignore');
  if (gitignore === undefined)
    plans.push({ path: '.gitignore', action: 'write', content: renderGitignore(), note: GITIGNORE_ENTRIES.join(', ') });
  else if (force && gitignore !== renderGitignore())
    plans.push({ path: '.gitignore', action: 'replace', content: renderGitignore(), note: 'replaced (--force)' });
  else {
    const merge = mergeGitignore(gitignore);
    plans.push(
      merge.text === undefined
        ? { path: '.gitignore', action: 'unchanged', note: 'already ignores what init would add' }
        : { path: '.gitignore', action: 'merge', content: merge.text, note: `added ${merge.added.join(', ')}` },
    );
  }
  for (const [path, content, what] of fixed) {
    const current = existing(path);
    if (current === undefined) plans.push({ path, action: 'write', content, note: what });
    else if (current === content) plans.push({ path, action: 'unchanged', note: 'already as init writes it' });
    else if (force) plans.push({ path, action: 'replace', content, note: 'replaced (--force)' });
    else plans.push({ path, action: 'keep', note: 'exists, kept as it is (--force replaces it)' });
  }
  return plans;
}
