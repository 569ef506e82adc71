/**
 * The published package's shape: exports, bins, files, dependency kinds, the in-repository
 * `import … from 'pullfleet'` mapping, and the version the controller image tag comes from. The packed
 * package itself is installed and run by scripts/pack-smoke.sh (CI).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import semver from 'semver';
import { ControllerInstall } from '../../src/constructs/controller-install.js';
import { findPackageJson, pullfleetVersion } from '../../src/version.js';

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  exports: Record<string, { types: string; default: string } | string>;
  bin: Record<string, string>;
  files: string[];
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as Manifest;
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** The source file a lib/ path is compiled from (`./lib/src/x/index.js` → `src/x/index.ts`). */
const sourceOf = (target: string) => target.replace(/^\.\/lib\//, '').replace(/\.d\.ts$|\.js$/, '.ts');

describe('package.json', () => {
  test('is publishable: not private, with exports for the root, model and controller, each with types', () => {
    expect(pkg.private).toBeUndefined();
    expect(Object.keys(pkg.exports)).toStrictEqual(['.', './model', './controller', './package.json']);
    for (const [entry, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect(target.types).toMatch(/^\.\/lib\/src\/.*\.d\.ts$/);
      expect(target.default).toMatch(/^\.\/lib\/src\/.*\.js$/);
      expect(sourceOf(target.types)).toBe(sourceOf(target.default));
      expect([entry, fs.existsSync(sourceOf(target.default))]).toStrictEqual([entry, true]);
    }
  });

  test("inside this repository, tsconfig paths map every export to the same source (import … from 'pullfleet' needs no build)", () => {
    const tsconfig = fs.readFileSync('tsconfig.json', 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const paths = (JSON.parse(tsconfig) as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions
      .paths;
    const expected = Object.fromEntries(
      Object.entries(pkg.exports)
        .filter(([, target]) => typeof target !== 'string')
        .map(([entry, target]) => [
          entry === '.' ? 'pullfleet' : `pullfleet/${entry.slice(2)}`,
          [`./${sourceOf((target as { default: string }).default)}`],
        ]),
    );
    expect(paths).toStrictEqual(expected);
    expect(fs.readFileSync('fleet.config.ts', 'utf8')).toMatch(/from 'pullfleet';/);
  });

  test('ships lib/, bin/ and the documentation (README, CHANGELOG, docs/ without the generated API reference), and every bin runs compiled code when src/ is absent', () => {
    expect(pkg.files).toStrictEqual([
      'lib/',
      'bin/',
      'docs/**/*.md',
      '!docs/api/',
      'README.md',
      'CHANGELOG.md',
      'CONTRIBUTING.md',
      'ARCHITECTURE.md',
    ]);
    expect(pkg.bin).toStrictEqual({
      pullfleet: 'bin/pullfleet.js',
      'pullfleet-controller': 'bin/pullfleet-controller.js',
    });
    expect(fs.readFileSync('bin/pullfleet.js', 'utf8')).toContain("await import('../lib/src/cli/program.js')");
    expect(fs.readFileSync('bin/pullfleet-controller.js', 'utf8')).toContain(
      "await import('../lib/src/controller/main.js')",
    );
    expect(fs.existsSync('src/cli/program.ts') && fs.existsSync('src/controller/main.ts')).toBe(true);
  });

  test('cdk8s, cdk8s-plus-28 and constructs are peer dependencies (and dev dependencies here); what synth runs is a dependency', () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toStrictEqual(['cdk8s', 'cdk8s-plus-28', 'constructs']);
    for (const [name, range] of Object.entries(pkg.peerDependencies)) {
      expect(pkg.devDependencies[name]).toBe(range);
      expect(pkg.dependencies[name]).toBeUndefined();
    }
    for (const name of ['cdk8s-cli', 'tsx', 'typescript', '@kubernetes/client-node'])
      expect(typeof pkg.dependencies[name]).toBe('string');
  });

  test('package-lock.json records the same dependency kinds', () => {
    const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as {
      packages: Record<string, Partial<Manifest>>;
    };
    const root = lock.packages[''];
    expect(root.dependencies).toStrictEqual(pkg.dependencies);
    expect(root.peerDependencies).toStrictEqual(pkg.peerDependencies);
    expect(root.devDependencies).toStrictEqual(pkg.devDependencies);
  });

  test('engines is true: every Node version it admits is admitted by every installed dependency and peer (and CI runs one)', () => {
    const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as {
      packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
    };
    const ours = (pkg as Manifest & { engines: { node: string } }).engines.node;
    const peers = new Set(Object.keys(pkg.peerDependencies).map((name) => `node_modules/${name}`));
    const narrower: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (!where || (entry.dev && !peers.has(where))) continue; // dev-only packages never reach users
      const theirs = !entry.engines || Array.isArray(entry.engines) ? undefined : entry.engines.node;
      if (theirs && !semver.subset(ours, theirs))
        narrower.push(`${where.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${theirs}`);
    }
    expect(narrower).toStrictEqual([]);
    expect(semver.satisfies('20.20.0', ours)).toBe(true);
    // engine-strict: an install that breaks the range fails instead of printing a warning nobody reads
    expect(fs.readFileSync('.npmrc', 'utf8')).toMatch(/^engine-strict=true$/m);
  });
});

describe('version', () => {
  test('GIVEN the package WHEN a ControllerInstall takes the default image THEN its tag is the package.json version', () => {
    const chart = new Chart(Testing.app(), 'hub');
    const install = new ControllerInstall(chart, 'Controller');
    expect(pullfleetVersion()).toBe(pkg.version);
    expect(install.image).toBe(`ghcr.io/pullfleet/pullfleet-controller:${pkg.version}`);
    const deployment = Testing.synth(chart).find((o) => o.kind === 'Deployment') as {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    };
    expect(deployment.spec.template.spec.containers[0].image).toBe(
      `ghcr.io/pullfleet/pullfleet-controller:${pkg.version}`,
    );
  });

  test('the Dockerfile runs the compiled controller without tsx', () => {
    const dockerfile = fs.readFileSync('Dockerfile', 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toContain('COPY --from=rootfs /rootfs/app/ /');
    expect(runtime).toContain('ENTRYPOINT ["node", "bin/pullfleet-controller.js"]');
    expect(runtime).toMatch(/\nUSER 65532:65532\n/);
    expect(runtime).not.toMatch(/tsx|COPY src/);
  });

  test('the package.json found is the nearest one named pullfleet, from the sources and from lib/src alike', () => {
    const outer = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-version-'));
    scratch.push(outer);
    const root = fs.mkdtempSync(path.join(outer, 'node_modules-'));
    fs.mkdirSync(path.join(root, 'pullfleet', 'lib', 'src'), { recursive: true });
    fs.writeFileSync(
      path.join(root, 'pullfleet', 'package.json'),
      JSON.stringify({ name: 'pullfleet', version: '9.8.7' }),
    );
    // A package.json of another name on the way up (a "type" marker, say) is not the one.
    fs.writeFileSync(path.join(root, 'pullfleet', 'lib', 'package.json'), JSON.stringify({ type: 'module' }));
    expect(findPackageJson(path.join(root, 'pullfleet', 'lib', 'src'))).toBe(
      path.join(root, 'pullfleet', 'package.json'),
    );
    expect(() => findPackageJson(root)).toThrow(`no package.json of pullfleet above ${root}: reinstall pullfleet`);
  });
});
