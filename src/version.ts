/**
 * The version of the pullfleet package, read from its package.json when first asked for. The file is
 * found by walking up from this module, so the same code works from the sources (src/version.ts) and
 * from the build (lib/src/version.js).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The fields of pullfleet's package.json that init and the constructs read. */
export interface PullfleetManifest {
  readonly version: string;
  readonly peerDependencies: Readonly<Record<string, string>>;
  readonly devDependencies: Readonly<Record<string, string>>;
}

/** The package.json of the pullfleet package holding `from` (a folder), searched upward. */
export function findPackageJson(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown };
      if (pkg.name === 'pullfleet') return file;
    }
    if (path.dirname(dir) === dir) throw new Error(`no package.json of pullfleet above ${from}: reinstall pullfleet`);
  }
}

/** The `version` of pullfleet's package.json (for example the default controller image tag). */
export function pullfleetVersion(): string {
  if (cached === undefined) {
    const file = findPackageJson(path.dirname(fileURLToPath(import.meta.url)));
    const { version } = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown };
    if (typeof version !== 'string' || version === '') throw new Error(`${file} has no version: reinstall pullfleet`);
    cached = version;
  }
  return cached;
}

/** pullfleet's package.json: version, peer dependencies and dev dependencies. */
export function pullfleetManifest(): PullfleetManifest {
  const file = findPackageJson(path.dirname(fileURLToPath(import.meta.url)));
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Record<keyof PullfleetManifest, unknown>>;
  const record = (value: unknown): Record<string, string> =>
    typeof value === 'object' && value !== null ? (value as Record<string, string>) : {};
  return {
    version: pullfleetVersion(),
    peerDependencies: record(pkg.peerDependencies),
    devDependencies: record(pkg.devDependencies),
  };
}
