/**
 * Runs the fleet description as an ES module in a CommonJS project too. In a package without
 * `"type": "module"`, tsx loads `fleet.config.ts` as CommonJS, and its require hook then turns
 * pullfleet's own ES modules into CommonJS as well, whose imports of packages that export a subpath for
 * `import` alone fail with ERR_PACKAGE_PATH_NOT_EXPORTED. So for such a project
 * synth, validate and plan add a module hook (bin/fleet-esm.mjs, through NODE_OPTIONS) that loads the
 * project's own `.ts` and `.tsx` files as ES modules, as `"type": "module"` would; pullfleet itself
 * then loads natively.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findPackageJson } from '../../version.js';
import { readCdk8sConfig } from './cdk8s-config.js';
import { configFileOf } from './typecheck.js';

/** Tells bin/fleet-esm.mjs which folder's TypeScript files load as ES modules. */
export const ESM_SCOPE_ENV = 'PULLFLEET_ESM_SCOPE';

/** The nearest package.json at or above `dir`, if any. */
function nearestPackageJson(dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    const file = path.join(at, 'package.json');
    if (fs.existsSync(file)) return file;
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * The folder whose TypeScript files Node would load as CommonJS, when `file` (a `.ts` or `.tsx`
 * file) is one of them: the folder of the nearest package.json without `"type": "module"`, or `cwd`
 * when there is no package.json. Undefined when the file loads as an ES module anyway.
 */
export function commonJsScope(file: string, cwd: string): string | undefined {
  if (!/\.tsx?$/.test(file) || file.endsWith('.d.ts')) return undefined;
  const pkg = nearestPackageJson(path.dirname(file));
  if (!pkg) return cwd;
  try {
    const { type } = JSON.parse(fs.readFileSync(pkg, 'utf8')) as { type?: unknown };
    return type === 'module' ? undefined : path.dirname(pkg);
  } catch {
    return undefined; // Node itself reports a package.json it cannot parse
  }
}

/** The module hook's registration file (bin/fleet-esm.mjs of the pullfleet package). */
function hookFile(): string {
  const root = path.dirname(findPackageJson(path.dirname(fileURLToPath(import.meta.url))));
  return path.join(root, 'bin', 'fleet-esm.mjs');
}

/**
 * The environment to run the app command (`app`, else `app:` of cdk8s.yaml) in: `base`, plus the
 * module hook when the TypeScript file the command runs sits in a CommonJS package.
 */
export function fleetProgramEnv(
  app: string | undefined,
  cwd: string,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  let command = app;
  try {
    command ??= readCdk8sConfig(cwd).app;
  } catch {
    return base; // cdk8s reports a cdk8s.yaml it cannot read
  }
  const file = command ? configFileOf(command, cwd) : undefined;
  const scope = file ? commonJsScope(file, cwd) : undefined;
  if (!scope) return base;
  // A file URL has no spaces, so NODE_OPTIONS needs no quoting.
  const hook = `--import=${pathToFileURL(hookFile()).href}`;
  return { ...base, [ESM_SCOPE_ENV]: scope, NODE_OPTIONS: base.NODE_OPTIONS ? `${base.NODE_OPTIONS} ${hook}` : hook };
}
