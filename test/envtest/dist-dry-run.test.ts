/**
 * Every object synth wrote into dist/ (hub objects, works, the controller install, spoke bootstrap and
 * folders), and every manifest those ManifestWorks carry to a spoke, is accepted by a real API server:
 * a server-side apply with dry-run (strict field validation, admission, CEL compiled by the server).
 *
 * The server is Kubernetes 1.28, which serves ValidatingAdmissionPolicy only as v1beta1 (v1 arrived in
 * 1.30); those objects are sent as v1beta1, whose schema for the fields pullfleet writes is the same. The
 * two GitOpsCluster flavours share one CRD name, so the OCM (v1alpha1) flavour's objects are checked
 * with its CRD installed in place of ACM's, which is restored afterwards.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { describeRealServer } from '../support/real-server.js';
import { GITOPSCLUSTER_CRD_FILES, loadKubeConfig, readCrd, replaceCrd } from '../support/envtest-cluster.js';
import { RawClient, RawApiError, type RawObject } from '../support/raw-client.js';
import { distObjects, type Located } from '../support/version-matrix.js';
import { buildManifestWork, isPullApplication } from '../../src/model/delivery/manifestwork.js';
import type { Application } from '../../src/model/core/types.js';

/** ValidatingAdmissionPolicy(Binding) v1 → v1beta1, the version a 1.28 server serves. */
function servedVersion(object: RawObject): RawObject {
  if (
    object.apiVersion === 'admissionregistration.k8s.io/v1' &&
    /^ValidatingAdmissionPolicy(Binding)?$/.test(object.kind)
  ) {
    return { ...object, apiVersion: 'admissionregistration.k8s.io/v1beta1' };
  }
  return object;
}

const isOcmGitOpsCluster = (l: Located): boolean =>
  l.object.kind === 'GitOpsCluster' && l.object.apiVersion === 'apps.open-cluster-management.io/v1alpha1';
const label = (l: Located): string =>
  `${l.object.kind} ${l.object.metadata.namespace ? `${l.object.metadata.namespace}/` : ''}${l.object.metadata.name} from ${l.where}`;

describeRealServer('dist/ on a real API server', (kubeconfigPath) => {
  const client = new RawClient(loadKubeConfig(kubeconfigPath));
  const objects = distObjects();

  /** Creates every namespace the objects live in (for real: dry-run objects need their namespace to exist). */
  beforeAll(async () => {
    const namespaces = new Set<string>();
    for (const { object } of objects) {
      if (object.metadata.namespace) namespaces.add(object.metadata.namespace);
      if (object.kind === 'Namespace') namespaces.add(object.metadata.name);
    }
    for (const name of [...namespaces].sort()) {
      try {
        await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      } catch (e) {
        if (!(e instanceof RawApiError && e.code === 409)) throw e;
      }
    }
  });

  afterAll(async () => {
    // Leave the ACM flavour installed for the suites after this one.
    await replaceCrd(loadKubeConfig(kubeconfigPath), readCrd(GITOPSCLUSTER_CRD_FILES.v1beta1));
  });

  test('dist/ holds hub objects, works with payloads, the controller install and spoke bootstrap', () => {
    const kinds = new Set(objects.map((o) => o.object.kind));
    for (const kind of [
      'ManifestWork',
      'Application',
      'ApplicationSet',
      'Placement',
      'Deployment',
      'CustomResourceDefinition',
      'ValidatingAdmissionPolicy',
      'GitOpsCluster',
    ]) {
      expect(kinds).toContain(kind);
    }
    expect(objects.some((o) => o.where.includes('(in work '))).toBe(true);
  });

  test('every namespaced object names its namespace', async () => {
    const missing: string[] = [];
    for (const l of objects.filter((o) => !isOcmGitOpsCluster(o))) {
      const served = servedVersion(l.object);
      const resource = await client.resource(served.apiVersion, served.kind);
      if (resource.namespaced && !l.object.metadata.namespace) missing.push(label(l));
    }
    expect(missing).toEqual([]);
  });

  /** Dry-run applies `subset`; returns one line per refusal. */
  async function refusals(subset: readonly Located[]): Promise<string[]> {
    const refused: string[] = [];
    for (const l of subset) {
      try {
        await client.apply(servedVersion(l.object), 'pullfleet-dist-check', { dryRun: true });
      } catch (e) {
        refused.push(`${label(l)}: ${(e as Error).message}`);
      }
    }
    return refused;
  }

  test('the server accepts every object and payload manifest (server-side apply, dry-run, strict fields), ACM GitOpsCluster flavour', async () => {
    const subset = objects.filter((l) => !isOcmGitOpsCluster(l));
    expect(subset.length).toBeGreaterThan(100);
    expect(await refusals(subset)).toEqual([]);
  });

  test('the server accepts the OCM (v1alpha1) GitOpsCluster objects with that flavour of the CRD installed', async () => {
    const subset = objects.filter(isOcmGitOpsCluster);
    expect(subset.length).toBeGreaterThan(0);
    await replaceCrd(loadKubeConfig(kubeconfigPath), readCrd(GITOPSCLUSTER_CRD_FILES.v1alpha1));
    expect(subset.filter((l) => !l.object.metadata.namespace).map(label)).toEqual([]);
    expect(await refusals(subset)).toEqual([]);
  });

  test('the Applications an ApplicationSet generates, and the works the controller wraps them in, are accepted too', async () => {
    const appSets = objects.filter((l) => l.object.kind === 'ApplicationSet' && !l.where.includes('(in work '));
    expect(appSets.length).toBeGreaterThan(0);
    const refused: string[] = [];
    let wrapped = 0;
    for (const { object, where } of appSets) {
      // What the applicationset-controller makes of the template for one cluster (fasttemplate `{{name}}`).
      const template = (object.spec as { template: { metadata: RawObject['metadata']; spec: unknown } }).template;
      const generated = JSON.parse(JSON.stringify(template).replaceAll('{{name}}', 'prod-east')) as {
        metadata: RawObject['metadata'];
        spec: unknown;
      };
      const app: RawObject = {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { ...generated.metadata, namespace: object.metadata.namespace },
        spec: generated.spec,
      };
      try {
        const stored = await client.apply<Application>(app, 'pullfleet-dist-check');
        try {
          // Agent-model ApplicationSets generate apps the principal routes; the controller wraps only pull apps.
          if (!isPullApplication(stored)) continue;
          wrapped++;
          const work = buildManifestWork(stored) as unknown as RawObject;
          await client.apply(work, 'pullfleet-dist-check', { dryRun: true });
          for (const m of (work.spec as { workload: { manifests: RawObject[] } }).workload.manifests) {
            await client.apply(servedVersion(m), 'pullfleet-dist-check', { dryRun: true });
          }
        } finally {
          await client.delete('argoproj.io/v1alpha1', 'Application', app.metadata.namespace, app.metadata.name);
        }
      } catch (e) {
        refused.push(`ApplicationSet ${object.metadata.name} from ${where}: ${(e as Error).message}`);
      }
    }
    expect(refused).toEqual([]);
    expect(wrapped).toBeGreaterThan(0);
  });

  test('a dry run really validates: a work with an unknown field is refused', async () => {
    const work = objects.find((l) => l.object.kind === 'ManifestWork')!.object;
    const broken = { ...work, spec: { ...(work.spec as object), notAField: true } };
    await expect(client.apply(broken, 'pullfleet-dist-check', { dryRun: true })).rejects.toThrow(/notAField/);
  });
});
