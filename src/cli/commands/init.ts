/**
 * `pullfleet init [dir]`: turns an empty or existing (git) folder into a fleet repository: package.json
 * (merged when one exists), tsconfig.json, cdk8s.yaml, a small fleet.config.ts importing from 'pullfleet',
 * .gitignore (merged), deletions.txt and a GitHub Actions workflow. Existing files are kept unless
 * --force; everything is decided before the first write, so bad input writes nothing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { pullfleetManifest } from '../../version.js';
import {
  configFileName,
  findInitConflicts,
  initScripts,
  packageNameFor,
  planInit,
  type InitFilePlan,
  type InitVersions,
} from '../support/init-files.js';

export interface InitCommandOptions {
  /** Replace existing files (package.json and .gitignore are still merged, never replaced). @default false */
  readonly force?: boolean;
  /** Package name of a new package.json. @default - from the folder name */
  readonly name?: string;
  /** Versions written into package.json. @default - this pullfleet's version and peer dependencies */
  readonly versions?: InitVersions;
}

export interface InitResult {
  readonly ok: boolean;
  /** What happened to each file (empty when init refused before deciding). */
  readonly files: InitFilePlan[];
  /** The report for the user. */
  readonly output: string;
}

/** The versions of the running pullfleet package. */
export function currentVersions(): InitVersions {
  const manifest = pullfleetManifest();
  return {
    pullfleet: manifest.version,
    peers: manifest.peerDependencies,
    typesNode: manifest.devDependencies['@types/node'] ?? '^20.11.0',
  };
}

/** Text of an existing regular file, undefined when there is none; throws when the path is something else. */
function readExisting(dir: string, rel: string): string | undefined {
  const file = path.join(dir, rel);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return undefined;
    throw error;
  }
  if (!stat.isFile()) throw new Error(`${rel} exists and is not a file: move it away, then run pullfleet init again`);
  return fs.readFileSync(file, 'utf8');
}

/** The scripts of an existing package.json (none when there is none or it cannot be read). */
function scriptsAfter(pkgText: string | undefined): Record<string, unknown> {
  if (pkgText === undefined) return {};
  try {
    const pkg = JSON.parse(pkgText) as { scripts?: unknown };
    return typeof pkg.scripts === 'object' && pkg.scripts !== null ? (pkg.scripts as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Whether `dir` is inside a git work tree (a .git folder or file in it or above it). */
function inGitRepository(dir: string): boolean {
  for (let at = dir; ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, '.git'))) return true;
    if (path.dirname(at) === at) return false;
  }
}

/** Writes `content` to `file` through a temporary sibling and a rename, so a failed write leaves the old file. */
function writeAtomically(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.pullfleet-init-${process.pid}`);
  try {
    fs.writeFileSync(temp, content, { encoding: 'utf8', flag: 'wx' });
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

const PACKAGE_NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]{0,213}$/;

const VERB: Record<InitFilePlan['action'], string> = {
  write: 'wrote',
  replace: 'replaced',
  merge: 'merged',
  keep: 'skipped',
  unchanged: 'unchanged',
};

/** Runs init in `dir` (created when missing). Never throws for bad input; the result says what happened. */
export function runInit(dir: string, options: InitCommandOptions = {}): InitResult {
  const target = path.resolve(dir);
  const refuse = (message: string): InitResult => ({ ok: false, files: [], output: `pullfleet init: ${message}\n` });
  if (fs.existsSync(target) && !fs.statSync(target).isDirectory())
    return refuse(`${dir} is not a folder: give a folder (it is created when missing)`);
  if (options.name !== undefined && !PACKAGE_NAME.test(options.name))
    return refuse(
      `--name "${options.name}" is not an npm package name: use lower-case letters, digits, "-", "." and "_", for example "platform-fleet"`,
    );
  let plans: InitFilePlan[];
  let scripts: Record<string, unknown> = {};
  try {
    const pkgText = readExisting(target, 'package.json');
    let esm = true;
    if (pkgText !== undefined) {
      try {
        esm = (JSON.parse(pkgText) as { type?: unknown }).type === 'module';
      } catch {
        // planInit reports the unreadable package.json with the fix
      }
    }
    const name = options.name ?? packageNameFor(path.basename(target));
    const initOptions = { name, esm, versions: options.versions ?? currentVersions() };
    const existing = (rel: string) => readExisting(target, rel);
    const conflicts = findInitConflicts(initOptions, existing);
    if (conflicts.length > 0) {
      return refuse(
        `${dir} has ${conflicts.length === 1 ? 'one thing' : `${conflicts.length} things`} to fix first; nothing was written:\n${conflicts.map((c) => `  - ${c}`).join('\n')}\nthen run pullfleet init again`,
      );
    }
    plans = planInit(initOptions, existing, options.force === true);
    scripts = scriptsAfter(existing('package.json'));
  } catch (error) {
    return refuse(`${(error as Error).message}; nothing was written`);
  }
  const lines: string[] = [];
  const done: InitFilePlan[] = [];
  for (const plan of plans) {
    if (plan.content !== undefined) {
      try {
        writeAtomically(path.join(target, plan.path), plan.content);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        const rest = plans
          .slice(done.length + 1)
          .filter((p) => p.content !== undefined)
          .map((p) => p.path);
        lines.push(
          `pullfleet init: cannot write ${plan.path} (${code}): it is as it was${rest.length > 0 ? `; not written either: ${rest.join(', ')}` : ''}. Fix the folder's permissions and run pullfleet init again (files already written are kept; --force is not needed for them)`,
        );
        return { ok: false, files: done, output: `${lines.join('\n')}\n` };
      }
    }
    done.push(plan);
    lines.push(`${VERB[plan.action].padEnd(9)} ${plan.path}: ${plan.note}`);
  }
  const configName = plans.find((p) => p.path.startsWith('fleet.config.'))?.path ?? configFileName(true);
  if (configName.endsWith('.mts'))
    lines.push(
      `note: package.json has no "type": "module", so the fleet description is ${configName} (an ES module either way)`,
    );
  if (!inGitRepository(target))
    lines.push(`note: ${dir} is not in a git repository: run git init there before committing`);
  // `npm run synth` only where the script is pullfleet's; a script of the user's own keeps its meaning.
  const synth =
    scripts.synth === undefined || scripts.synth === initScripts().synth
      ? 'npm run synth'
      : 'npx pullfleet synth (scripts.synth is your own command)';
  lines.push(
    '',
    `next: npm install, edit ${configName}, ${synth}, then commit everything including dist/ (the CI workflow checks that dist/ is what synth produces)`,
  );
  return { ok: true, files: done, output: `${lines.join('\n')}\n` };
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description(
      'write a fleet repository here or in [dir]: package.json, fleet.config.ts, cdk8s.yaml, a CI workflow, …',
    )
    .argument('[dir]', 'folder of the fleet repository (created when missing)', '.')
    .option('--force', 'replace existing files (package.json and .gitignore are merged, never replaced)')
    .option('--name <name>', 'package name of a new package.json (default: the folder name)')
    .action((dir: string, opts: { force?: boolean; name?: string }) => {
      const result = runInit(dir, { force: opts.force, name: opts.name });
      (result.ok ? process.stdout : process.stderr).write(result.output);
      process.exitCode = result.ok ? 0 : 1;
    });
}
