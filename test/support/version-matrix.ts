/**
 * Objects pullfleet writes, held against the CRDs of every upstream release users run
 * (../shared/upstream-versions): each release's CRDs are installed in turn on an API server of the suite's
 * own, and every object is server-side applied with dry-run (strict field validation). A field only newer
 * releases have is listed with the first release that has it; an object carrying it must be refused before
 * that release and accepted from it on. docs/reference/compatibility.md is written from these tables.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from '@jest/globals';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { startEnvtest, type Envtest } from './envtest.js';
import { loadKubeConfig, replaceCrd } from './envtest-cluster.js';
import { RawApiError, RawClient, type RawObject } from './raw-client.js';
import type { KubeConfig } from '@kubernetes/client-node';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = join(ROOT, 'dist');
export const UPSTREAM_VERSIONS = join(ROOT, '..', 'shared', 'upstream-versions');

/** An object and where it came from (for messages). */
export interface Located {
  readonly object: RawObject;
  readonly where: string;
}

/** A field a release line lacks: objects carrying `field` (a key name) need release `since` or later. */
export interface Requirement {
  /** The key as it appears in the object (`deletionOrder`). */
  readonly key: string;
  /** Text the API server's refusal contains (`.spec.strategy.deletionOrder`). */
  readonly refusal: string;
  /** The first release that has it, as its folder is named (`v3.2`, `1.0`). */
  readonly since: string;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? yamlFiles(join(dir, e.name)) : e.name.endsWith('.yaml') ? [join(dir, e.name)] : [],
    )
    .sort();
}

/** Every object of dist/ (and every manifest of its ManifestWorks), with where it came from. */
export function distObjects(): Located[] {
  const out: Located[] = [];
  for (const file of yamlFiles(DIST)) {
    const rel = relative(DIST, file);
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const object = doc.toJSON() as RawObject | null;
      if (!object) continue;
      out.push({ object, where: rel });
      if (object.kind === 'ManifestWork') {
        const manifests = (object.spec as { workload?: { manifests?: RawObject[] } }).workload?.manifests ?? [];
        for (const m of manifests)
          out.push({ object: m, where: `${rel} (in work ${object.metadata.namespace}/${object.metadata.name})` });
      }
    }
  }
  return out;
}

/** `v3.2.12`, `1.0.0` or `2.17` → [major, minor]. */
export function minorOf(tag: string): [number, number] {
  const [major, minor] = tag.replace(/^v/, '').split('.').map(Number);
  return [major ?? 0, minor ?? 0];
}

export function atLeast(tag: string, since: string): boolean {
  const [a, b] = minorOf(tag);
  const [c, d] = minorOf(since);
  return a !== c ? a > c : b >= d;
}

/** The release folders under `dir`, oldest first. */
export function releases(dir: string): string[] {
  return readdirSync(dir).sort((x, y) => {
    const [a, b] = minorOf(x);
    const [c, d] = minorOf(y);
    return a !== c ? a - c : b - d;
  });
}

/** Every YAML CRD of one release folder. */
export function releaseCrds(dir: string): RawObject[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parseYaml(readFileSync(join(dir, f), 'utf8')) as RawObject);
}

/** Creates every namespace the objects live in. */
export async function createNamespaces(client: RawClient, objects: readonly Located[]): Promise<void> {
  const namespaces = new Set(objects.map((o) => o.object.metadata.namespace).filter((n): n is string => !!n));
  for (const name of [...namespaces].sort()) {
    try {
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (error) {
      if (!(error instanceof RawApiError && error.code === 409)) throw error;
    }
  }
}

/**
 * An API server of its own for the tests of the enclosing describe block: started before them with the
 * namespaces of `objects` created, stopped after them. Its kubeconfig path can be read once they run.
 */
export function dryRunServer(objects: readonly Located[]): Pick<Envtest, 'kubeconfigPath'> {
  let server: Envtest | undefined;
  beforeAll(async () => {
    server = await startEnvtest();
    await createNamespaces(new RawClient(loadKubeConfig(server.kubeconfigPath)), objects);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get kubeconfigPath(): string {
      if (!server)
        throw new Error('dryRunServer: the API server starts in beforeAll; read its kubeconfig inside a test');
      return server.kubeconfigPath;
    },
  };
}

/**
 * Installs each release's CRDs in turn and dry-runs every object against them. Returns what went against
 * the table: refusals no requirement explains, and objects a release accepted though a requirement says it
 * lacks the field.
 */
export async function checkReleases(
  kc: KubeConfig,
  dir: string,
  objects: readonly Located[],
  requirements: readonly Requirement[],
): Promise<{ unexplained: string[]; unexpectedlyAccepted: string[] }> {
  const client = new RawClient(kc);
  const unexplained: string[] = [];
  const unexpectedlyAccepted: string[] = [];
  for (const release of releases(dir)) {
    for (const crd of releaseCrds(join(dir, release))) await replaceCrd(kc, crd);
    for (const { object, where } of objects) {
      const text = JSON.stringify(object);
      const lacking = requirements.filter((r) => text.includes(`"${r.key}"`) && !atLeast(release, r.since));
      try {
        await client.apply(object, 'pullfleet-test', { dryRun: true });
        if (lacking.length > 0)
          unexpectedlyAccepted.push(`${release}: ${object.kind} ${object.metadata.name} from ${where}`);
      } catch (error) {
        const message = error instanceof RawApiError ? error.message : String(error);
        if (!lacking.some((r) => message.includes(r.refusal)))
          unexplained.push(`${release}: ${object.kind} ${object.metadata.name} from ${where}: ${message}`);
      }
    }
  }
  return { unexplained, unexpectedlyAccepted };
}
