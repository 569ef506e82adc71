/**
 * Issue 28, end to end: one fleet using every source type, every app prop, waves, values per spoke and
 * spoke labels in an ApplicationSet (test/fixtures/whole-spec/fleet.ts), run the way users run it.
 *
 * 1. `pullfleet synth --strict` of the fleet program through the binary, then `pullfleet validate --strict` of
 *    the fleet and of the folder it wrote: each exits 0.
 * 2. Every Application and ApplicationSet of that folder (hub objects, and the Applications inside the
 *    ManifestWorks), the payload the controller writes for each hub Application, and the Applications each
 *    ApplicationSet generates for the spokes of its Placement (with their payloads), server-side applied
 *    (dry run, strict field validation) against the Argo CD CRDs of exactly the release its target declares:
 *    hub objects against the hub's Argo CD, payloads against their spoke's.
 * 3. `pullfleet migrate applications` on what a team would keep in Git: each hub's Applications,
 *    ApplicationSets and Placements, and each spoke's payloads (push-model Applications to the spoke's own
 *    cluster, given with `--cluster https://kubernetes.default.svc=<spoke>`). The generated code, called on a
 *    fleet declaring the same hubs and spokes, is synthesized by the binary (type-checked), and every
 *    Application and ApplicationSet it renders is compared with its input: equal, modulo exactly what the
 *    report lists (untranslated fields are removed from the input; a renamed app is looked up by its new
 *    name; a skipped subject would not be compared, and none is). The report's notes must be the known ones:
 *    push becoming pull for payloads, and the waves of the waved app, which the code does not carry.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { Hub, PullApplicationSet } from '../../src/index.js';
import type { Application } from '../../src/model/core/types.js';
import { buildPayloadApplication, isPullApplication, targetCluster } from '../../src/model/delivery/manifestwork.js';
import { buildWholeSpecFleet } from '../fixtures/whole-spec/fleet.js';
import { runBinary } from '../support/cli.js';
import { startEnvtest, type Envtest } from '../support/envtest.js';
import { loadKubeConfig, replaceCrd } from '../support/envtest-cluster.js';
import { RawApiError, RawClient, type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { createNamespaces, releaseCrds, releases, UPSTREAM_VERSIONS } from '../support/version-matrix.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = 'test/fixtures/whole-spec/fleet.ts';
const ARGO = 'argoproj.io/v1alpha1';
const ARGO_RELEASES = join(UPSTREAM_VERSIONS, 'argo-cd');
const IN_CLUSTER = 'https://kubernetes.default.svc';
const PULL_LABEL = 'apps.open-cluster-management.io/pull-to-ocm-managed-cluster';
const CLUSTER_ANNOTATION = 'apps.open-cluster-management.io/ocm-managed-cluster';

/** An object of a synthesized folder, with the file it is in (relative to the folder). */
interface FileObject {
  readonly file: string;
  readonly object: RawObject;
}

/** Every object of every YAML file under `dir`. */
function readFolder(dir: string): FileObject[] {
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.yaml')).sort();
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
      .map((d) => d.toJSON() as RawObject | null)
      .filter((o): o is RawObject => o !== null)
      .map((object) => ({ file, object })),
  );
}

const isArgoApp = (o: RawObject) => o.apiVersion === ARGO && (o.kind === 'Application' || o.kind === 'ApplicationSet');
const manifestsOf = (work: RawObject) =>
  (work.spec as { workload?: { manifests?: RawObject[] } }).workload?.manifests ?? [];

/** The Argo CD release folder a declared version is checked against: its own, else its minor's latest patch. */
function argoRelease(declared: string): string {
  const [major, minor, patch] = declared.replace(/^v/, '').split('.');
  const sameMinor = releases(ARGO_RELEASES).filter((r) => r.startsWith(`v${major}.${minor}.`));
  const folder = sameMinor.find((r) => r === `v${major}.${minor}.${patch}`) ?? sameMinor.at(-1);
  if (!folder) throw new Error(`no Argo CD CRDs for release ${declared} in ${ARGO_RELEASES}`);
  return folder;
}

/** An object to dry-run, with the release it goes against. */
interface Target {
  readonly object: RawObject;
  readonly where: string;
  readonly release: string;
}

/**
 * Every Application and ApplicationSet of the synthesized folder, the payloads the controller writes, and the
 * Applications each ApplicationSet generates (with their payloads), each with its target's release.
 */
function targetsOf(dist: readonly FileObject[], hubs: readonly Hub[]): Target[] {
  const out: Target[] = [];
  const hubOf = (name: string) => hubs.find((h) => h.name === name)!;
  const spokeRelease = (hub: Hub, spoke: string) => {
    const declared = hub.spokes.find((s) => s.name === spoke)?.versions.argoCD;
    if (!declared) throw new Error(`spoke ${spoke} of hub ${hub.name} declares no Argo CD version`);
    return argoRelease(declared);
  };
  const hubRelease = (hub: Hub) => argoRelease(hub.versions.argoCD!);
  const payloadOf = (hub: Hub, app: RawObject, where: string): Target => ({
    object: buildPayloadApplication(app as unknown as Application) as unknown as RawObject,
    where: `${where} (the payload the controller writes)`,
    release: spokeRelease(hub, targetCluster(app)!),
  });
  for (const { file, object } of dist) {
    const hub = hubOf(file.split('/')[0]);
    if (isArgoApp(object)) {
      // Objects of a spoke's bootstrap go to the spoke; the rest to the hub.
      const bootstrap = /\/bootstrap\/([^/]+)\.yaml$/.exec(file)?.[1];
      out.push({ object, where: file, release: bootstrap ? spokeRelease(hub, bootstrap) : hubRelease(hub) });
      if (object.kind === 'Application' && isPullApplication(object)) out.push(payloadOf(hub, object, file));
    }
    if (object.kind === 'ManifestWork')
      for (const m of manifestsOf(object).filter(isArgoApp))
        out.push({
          object: m,
          where: `${file} (in work ${object.metadata.name})`,
          release: spokeRelease(hub, object.metadata.namespace!),
        });
  }
  // What each ApplicationSet generates on the hub, as the applicationset-controller writes it: the template
  // with each spoke's name and the labels of its cluster Secret (the matrix's second generator) filled in.
  for (const hub of hubs) {
    const secrets = dist.filter((o) => o.file.startsWith(`${hub.name}/`) && o.object.kind === 'Secret');
    for (const appSet of hub.node.findAll().filter((c): c is PullApplicationSet => c instanceof PullApplicationSet)) {
      const rendered = dist.find(
        (o) =>
          o.file.startsWith(`${hub.name}/`) &&
          o.object.kind === 'ApplicationSet' &&
          o.object.metadata.name === appSet.name,
      )!.object;
      const template = (rendered.spec as { template: RawObject }).template;
      for (const spoke of appSet.placement.selectedSpokes()) {
        const labelsOf = (o: RawObject) => (o.metadata.labels ?? {}) as Record<string, string>;
        const secret = secrets.find((s) => labelsOf(s.object)['pullfleet.io/cluster'] === spoke.name);
        const labels = secret ? labelsOf(secret.object) : {};
        const text = JSON.stringify(template)
          .replaceAll('{{name}}', spoke.name)
          .replace(/\{\{metadata\.labels\.([^}]+)\}\}/g, (param, key: string) => {
            const value = labels[key];
            if (value === undefined)
              throw new Error(`${param}: the cluster Secret of ${spoke.name} has no label ${key}`);
            return value;
          });
        const generated = JSON.parse(text) as RawObject;
        const app = {
          apiVersion: ARGO,
          kind: 'Application',
          metadata: {
            ...generated.metadata,
            namespace: rendered.metadata.namespace,
            ownerReferences: [
              { apiVersion: ARGO, kind: 'ApplicationSet', name: appSet.name, uid: 'appset-uid', controller: true },
            ],
          },
          spec: generated.spec,
        } as RawObject;
        const where = `ApplicationSet ${hub.name}/${appSet.name} for spoke ${spoke.name}`;
        out.push({ object: app, where, release: hubRelease(hub) });
        out.push(payloadOf(hub, app, where));
      }
    }
  }
  // An object given twice (a work's payload is the one the controller writes) is dry-run once per release.
  const seen = new Set<string>();
  return out.filter((t) => {
    const key = `${t.release} ${JSON.stringify(t.object)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ------------------------------------------------------------------ structural comparison

type Json = unknown;
const isObj = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every difference between `want` and `got`, as `path: want → got` lines. */
function differences(want: Json, got: Json, at: string): string[] {
  if (isObj(want) && isObj(got))
    return [...new Set([...Object.keys(want), ...Object.keys(got)])]
      .sort()
      .flatMap((k) => differences(want[k], got[k], `${at}.${k}`));
  if (Array.isArray(want) && Array.isArray(got) && want.length === got.length)
    return want.flatMap((w, i) => differences(w, got[i], `${at}[${i}]`));
  return JSON.stringify(want) === JSON.stringify(got)
    ? []
    : [`${at}: ${JSON.stringify(want) ?? '(none)'} → ${JSON.stringify(got) ?? '(none)'}`];
}

function deletePath(obj: Record<string, Json>, path: string): void {
  const parts = path.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '');
  let at: Json = obj;
  for (const p of parts.slice(0, -1)) at = isObj(at) || Array.isArray(at) ? (at as Record<string, Json>)[p] : undefined;
  if (isObj(at)) delete at[parts[parts.length - 1]];
}

interface Note {
  readonly subject: string;
  readonly severity: 'changed' | 'untranslated' | 'skipped';
  readonly message: string;
}

/** Labels and annotations a user wrote: without pullfleet's own keys and the pull-delivery keys it renders. */
function userKeys(map: Json): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(isObj(map) ? map : {}).filter(
      ([k]) =>
        !k.startsWith('pullfleet.io/') &&
        k !== 'app.kubernetes.io/managed-by' &&
        k !== PULL_LABEL &&
        k !== CLUSTER_ANNOTATION &&
        k !== 'argocd.argoproj.io/skip-reconcile',
    ),
  );
}

/** What of an Application (or ApplicationSet) the comparison covers: its user metadata, finalizers and spec. */
function comparable(o: RawObject): Record<string, Json> {
  const template = o.kind === 'ApplicationSet' ? (o.spec as { template: RawObject }).template : undefined;
  const meta = template ? template.metadata : o.metadata;
  return JSON.parse(
    JSON.stringify({
      labels: userKeys(meta.labels),
      annotations: userKeys(meta.annotations),
      finalizers: (meta as { finalizers?: string[] }).finalizers ?? [],
      spec: o.spec,
    }),
  ) as Record<string, Json>;
}

/**
 * Compares each Application and ApplicationSet of `input` with what the migrated code rendered (`output`), as
 * the report (`notes`) describes it; returns every difference, and how many objects were compared and skipped.
 */
function roundTrip(
  input: readonly RawObject[],
  output: readonly RawObject[],
  notes: readonly Note[],
  subjectOf: (o: RawObject) => string,
  nameOf: (o: RawObject) => string,
): { differences: string[]; compared: number; skipped: string[] } {
  const out = { differences: [] as string[], compared: 0, skipped: [] as string[] };
  for (const o of input) {
    const subject = subjectOf(o);
    const own = notes.filter((n) => n.subject === subject);
    if (own.some((n) => n.severity === 'skipped')) {
      out.skipped.push(subject);
      continue;
    }
    const renamed = own.map((n) => /its hub Application is named "([^"]+)"/.exec(n.message)?.[1]).find(Boolean);
    const name = renamed ?? nameOf(o);
    const got = output.find((r) => r.kind === o.kind && r.metadata.name === name);
    if (!got) {
      out.differences.push(`${subject}: the migrated code renders no ${o.kind} ${name}`);
      continue;
    }
    const want = comparable(o);
    // Fields the report says were not translated are not expected back.
    for (const n of own.filter((n) => n.severity === 'untranslated')) {
      const path = /^(spec[\w.[\]]*)/.exec(n.message)?.[1];
      if (path) deletePath(want, path);
    }
    out.differences.push(...differences(want, comparable(got), subject));
    out.compared++;
  }
  return out;
}

/** `pullfleet migrate applications` through the binary: the code written and the JSON report. */
function migrate(dir: string, name: string, paths: readonly string[], cluster?: string): { notes: Note[] } {
  const code = join(dir, `${name}.ts`);
  const report = join(dir, `${name}.report.json`);
  const result = runBinary([
    'migrate',
    'applications',
    ...paths,
    '-o',
    code,
    '--report',
    report,
    '--json',
    '--import',
    relative(dir, join(ROOT, 'src', 'index.js')),
    ...(cluster ? ['--cluster', `${IN_CLUSTER}=${cluster}`] : []),
  ]);
  if (result.code !== 0) throw new Error(`migrate applications ${name} exited ${result.code}: ${result.err}`);
  return JSON.parse(readFileSync(report, 'utf8')) as { notes: Note[] };
}

describeRealServer(
  'one fleet with the whole Application spec: synth, validate, dry-run per declared release, migrate back',
  () => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    // Under the repository (.tmp/ is ignored by Git) so that the migrated code resolves cdk8s and the sources.
    const dir = mkdtempSync(join(ROOT, '.tmp', 'whole-spec-'));
    const dist = join(dir, 'dist');
    const fleet = buildWholeSpecFleet({ outdir: '/nonexistent/never-written' });
    const hubs = fleet.node.children.filter((c): c is Hub => c instanceof Hub);
    let server: Envtest;
    let objects: FileObject[] = [];
    const started = Date.now();

    beforeAll(async () => {
      const synth = runBinary(['synth', '--strict', '-a', `${process.execPath} --import tsx ${FIXTURE}`, '-o', dist]);
      if (synth.code !== 0) throw new Error(`pullfleet synth exited ${synth.code}:\n${synth.err}${synth.out}`);
      objects = readFolder(dist);
      server = await startEnvtest();
    }, 180_000);

    afterAll(async () => {
      await server?.stop();
      if (process.env.PULLFLEET_WHOLE_SPEC_KEEP === '1') process.stdout.write(`whole-spec: kept ${dir}\n`);
      else rmSync(dir, { recursive: true, force: true });
      process.stdout.write(`whole-spec: ${((Date.now() - started) / 1000).toFixed(1)} s in all\n`);
    });

    test('the fleet synthesizes as users run it, and validate --strict passes the fleet and the folder it wrote', () => {
      const app = `${process.execPath} --import tsx ${FIXTURE}`;
      const fleetMode = runBinary(['validate', '--strict', '-a', app, '--outdir', dist]);
      expect({ code: fleetMode.code, out: fleetMode.out }).toStrictEqual({
        code: 0,
        out: 'valid: 0 errors, 0 warnings\n',
      });
      const folderMode = runBinary(['validate', '--strict', dist]);
      expect(folderMode.code).toBe(0);
      expect(folderMode.out).toMatch(/^valid: 0 errors, 0 warnings in \d+ objects \(\d+ files\)\n$/);
      // The folder holds what the fleet renders in process.
      const rendered = [...fleet.renderObjects().values()].flat().filter((o) => isArgoApp(o as RawObject));
      expect(objects.filter((o) => isArgoApp(o.object)).map((o) => o.object)).toStrictEqual(rendered);
    });

    test('the fixture uses every source type, every app prop, waves, perSpoke and SpokeParam.label', () => {
      const text = JSON.stringify(objects.map((o) => o.object));
      for (const key of [
        '"directory"',
        '"jsonnet"',
        '"extVars"',
        '"kustomize"',
        '"patches"',
        '"components"',
        '"chart":"nginx"',
        '"repoURL":"oci://ghcr.io/example/charts/web"',
        '"skipSchemaValidation"',
        '"passCredentials"',
        '"fileParameters"',
        '"plugin"',
        '"ref":"values"',
        '"ref":"shared"',
        '"sources"',
        '"retry"',
        '"managedNamespaceMetadata"',
        '"ignoreDifferences"',
        '"managedFieldsManagers"',
        '"info"',
        '"revisionHistoryLimit"',
        '"Delete=confirm"',
        '"PrunePropagationPolicy=background"',
        '"pullfleet.io/delivery":"waved"',
        '{{metadata.labels.spoke.pullfleet.io/region}}',
        '"api.east.example.com"',
        '"api.west.example.com"',
      ])
        expect(text).toContain(key);
      // Three spokes on the current hub, of which two get the oci:// app; the legacy hub's spokes do not.
      const oci = objects.filter((o) => o.object.kind === 'Application' && o.object.metadata.name.startsWith('oci-'));
      expect(
        oci.map((o) => `${o.file} ${o.object.metadata.name}`).filter((s) => !s.includes('oci-plain')),
      ).toStrictEqual(['current/hub/applications.yaml oci-east', 'current/hub/applications.yaml oci-west']);
    });

    test('every declared Argo CD release accepts every Application and ApplicationSet rendered for it', async () => {
      const targets = targetsOf(objects, hubs);
      const kc = loadKubeConfig(server.kubeconfigPath);
      const client = new RawClient(kc);
      await createNamespaces(client, targets);
      const byRelease = new Map<string, Target[]>();
      for (const t of targets) byRelease.set(t.release, [...(byRelease.get(t.release) ?? []), t]);
      const refused: string[] = [];
      const counts: Record<string, Record<string, number>> = {};
      for (const release of [...byRelease.keys()].sort()) {
        for (const crd of releaseCrds(join(ARGO_RELEASES, release))) await replaceCrd(kc, crd);
        counts[release] = { Application: 0, ApplicationSet: 0 };
        for (const { object, where } of byRelease.get(release)!) {
          try {
            await client.apply(object, 'pullfleet-test', { dryRun: true });
            counts[release][object.kind]++;
          } catch (error) {
            const message = error instanceof RawApiError ? error.message : String(error);
            refused.push(`${release}: ${object.kind} ${object.metadata.name} from ${where}: ${message}`);
          }
        }
      }
      process.stdout.write(`whole-spec: dry-run per Argo CD release ${JSON.stringify(counts)}\n`);
      expect(refused).toStrictEqual([]);
      // Each declared release got objects: ApplicationSets on the hubs' releases, payloads on every spoke's.
      expect(Object.keys(counts)).toStrictEqual(['v2.14.21', 'v3.0.23', 'v3.1.16', 'v3.5.1']);
      expect(counts['v3.5.1'].ApplicationSet).toBe(2);
      expect(counts['v2.14.21'].ApplicationSet).toBe(2);
      for (const release of Object.keys(counts)) expect(counts[release].Application).toBeGreaterThan(10);
    }, 600_000);

    test('migrate applications round-trips the hub Applications and ApplicationSets and every spoke payload', () => {
      const subject = (o: RawObject) => `${o.kind} ${o.metadata.namespace ?? 'argocd'}/${o.metadata.name}`;
      const inputs: Array<{
        module: string;
        hub: string;
        factory: string;
        id: string;
        objects: RawObject[];
        notes: Note[];
      }> = [];
      for (const hub of hubs) {
        const factory = hub.name === 'current' ? 'currentHub' : 'legacyHub';
        // The hub's Applications, ApplicationSets and Placements, as the team keeps them.
        const files = ['applications.yaml', 'application-sets.yaml', 'placements.yaml'].map((f) =>
          join(dist, hub.name, 'hub', f),
        );
        const hubObjects = objects.filter((o) => o.file.startsWith(`${hub.name}/hub/`) && !o.file.includes('/works/'));
        inputs.push({
          module: `${hub.name}-hub`,
          hub: hub.name,
          factory,
          id: hub.name,
          objects: hubObjects.map((o) => o.object).filter(isArgoApp),
          notes: migrate(dir, `${hub.name}-hub`, files).notes,
        });
        // Each spoke's payloads: push-model Applications to the spoke's own cluster.
        for (const spoke of hub.spokes) {
          const payloads = objects
            .filter((o) => o.file === `${hub.name}/hub/works/${spoke.name}.yaml` && o.object.kind === 'ManifestWork')
            .flatMap((o) => manifestsOf(o.object).filter(isArgoApp));
          const file = join(dir, `${hub.name}-${spoke.name}-payloads.yaml`);
          writeFileSync(file, payloads.map((p) => JSON.stringify(p)).join('\n---\n'));
          const module = `${hub.name}-${spoke.name}-payloads`;
          inputs.push({
            module,
            hub: hub.name,
            factory,
            id: `${hub.name}-${spoke.name}`,
            objects: payloads,
            notes: migrate(dir, module, [file], spoke.name).notes,
          });
        }
      }
      // A fleet declaring the same hubs and spokes (one copy of a hub per payload folder, as each spoke's
      // payloads become apps of their own), each given its migrated apps; synthesized by the binary.
      const program = [
        "import { Fleet, FleetValidationError } from '../../src/index.js';",
        "import { currentHub, legacyHub } from '../../test/fixtures/whole-spec/fleet.js';",
        ...inputs.map((m, i) => `import { addMigratedApps as migrated${i} } from './${m.module}.js';`),
        'const fleet = new Fleet();',
        ...inputs.map((m, i) => `migrated${i}(${m.factory}(fleet, '${m.id}').hub);`),
        'try {',
        '  fleet.synth();',
        '} catch (error) {',
        '  if (!(error instanceof FleetValidationError)) throw error;',
        '  process.stderr.write(`${error.message}\\n`);',
        '  process.exitCode = 1;',
        '}',
        '',
      ].join('\n');
      writeFileSync(join(dir, 'migrated.ts'), program);
      const migratedDist = join(dir, 'migrated-dist');
      const synth = runBinary([
        'synth',
        '-a',
        `${process.execPath} --import tsx ${join(dir, 'migrated.ts')}`,
        '-o',
        migratedDist,
      ]);
      expect({ code: synth.code, err: synth.code === 0 ? '' : synth.err }).toStrictEqual({ code: 0, err: '' });
      const rendered = readFolder(migratedDist);

      const summary: Record<string, { compared: number; notes: number }> = {};
      const different: string[] = [];
      const unexpectedNotes: string[] = [];
      for (const m of inputs) {
        const output = rendered.filter((o) => o.file.startsWith(`${m.id}/hub/`)).map((o) => o.object);
        const result = roundTrip(m.objects, output, m.notes, subject, (o) => o.metadata.name);
        summary[m.module] = { compared: result.compared, notes: m.notes.length };
        different.push(...result.differences.map((d) => `${m.module}: ${d}`));
        // Nothing is skipped: every Application and ApplicationSet is compared.
        expect({ module: m.module, compared: result.compared, skipped: result.skipped }).toStrictEqual({
          module: m.module,
          compared: m.objects.length,
          skipped: [],
        });
        // What the report says is exactly what is known to differ: a payload's push becoming pull, and the
        // waves of the waved app, which the code does not carry (the per-spoke app is one app with perSpoke).
        const expected = m.module.endsWith('-payloads')
          ? (n: Note) => n.severity === 'changed' && n.message.startsWith('push becomes pull')
          : (n: Note) =>
              n.severity === 'untranslated' &&
              /^Application argocd\/waved-/.test(n.subject) &&
              n.message.startsWith('it is rolled out in waves');
        unexpectedNotes.push(
          ...m.notes.filter((n) => !expected(n)).map((n) => `${m.module}: ${n.subject}: [${n.severity}] ${n.message}`),
        );
      }
      process.stdout.write(`whole-spec: migrate round trip ${JSON.stringify(summary)}\n`);
      // The per-spoke app and the ApplicationSet reading spoke labels come back as such, not as copies.
      for (const hub of hubs) {
        const code = readFileSync(join(dir, `${hub.name}-hub.ts`), 'utf8');
        expect(code).toContain('perSpoke: (spoke) => perSpokePerSpoke[spoke.name] ?? {},');
        expect(code).toContain("valueFiles: [`$values/api/${SpokeParam.label('region')}.yaml`],");
      }
      expect(unexpectedNotes).toStrictEqual([]);
      expect(different).toStrictEqual([]);
    }, 300_000);
  },
);
