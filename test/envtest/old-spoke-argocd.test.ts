/**
 * A spoke on Argo CD 3.0 or older, on a real API server with that release's Application CRD (v3.0.23 from
 * ../shared/upstream-versions): a hub Application that a 3.3+ applicationset-controller left with
 * `syncPolicy.automated.enabled: false` (a RollingSync step) is refused there as it stands, and accepted
 * as the payload pullfleet writes into the work, which means the same on every release (no automated sync).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import {
  ARGOCD_API_VERSION,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
} from '../../src/model/core/keys.js';
import type { Application } from '../../src/model/core/types.js';
import { buildPayloadApplication } from '../../src/model/delivery/manifestwork.js';
import { startEnvtest, type Envtest } from '../support/envtest.js';
import { applyCrds, loadKubeConfig } from '../support/envtest-cluster.js';
import { RawClient, type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';

const V3_0_CRD = '../shared/upstream-versions/argo-cd/v3.0.23/application-crd.yaml';

/** A generated hub Application of a RollingSync step, as a 3.3+ applicationset-controller leaves it. */
function heldHubApp(enabled: boolean): Application {
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata: {
      name: `edge-1-web-${String(enabled)}`,
      namespace: 'argocd',
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [SKIP_RECONCILE_ANNOTATION]: 'true', [MANAGED_CLUSTER_ANNOTATION]: 'edge-1' },
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
      source: { repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: 'main' },
      syncPolicy: { automated: { enabled, prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  };
}

describeRealServer('a spoke on Argo CD 3.0', () => {
  let spoke: Envtest;
  let client: RawClient;

  beforeAll(async () => {
    spoke = await startEnvtest();
    const kc = loadKubeConfig(spoke.kubeconfigPath);
    await applyCrds(kc, [parseYaml(readFileSync(V3_0_CRD, 'utf8')) as RawObject]);
    client = new RawClient(kc);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'argocd' } });
  }, 120_000);

  afterAll(async () => {
    await spoke?.stop();
  });

  const apply = (app: Application) =>
    client.apply(app as unknown as RawObject, 'work-agent').then(
      () => 'accepted',
      (error: Error) => error.message,
    );

  test('GIVEN automated.enabled false or true on the hub THEN the hub spec is refused, the payload is applied, and only enabled true keeps automated sync', async () => {
    for (const enabled of [false, true]) {
      const hub = heldHubApp(enabled);
      const stripped = { ...hub, metadata: { name: hub.metadata.name, namespace: 'argocd' } };
      expect(await apply(stripped)).toContain('.spec.syncPolicy.automated.enabled: field not declared in schema');
      const payload = buildPayloadApplication(hub);
      expect(await apply(payload)).toBe('accepted');
      const stored = await client.get<Application>(ARGOCD_API_VERSION, 'Application', 'argocd', hub.metadata.name);
      expect(stored?.spec.syncPolicy).toStrictEqual(
        enabled
          ? { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] }
          : { syncOptions: ['CreateNamespace=true'] },
      );
    }
  });
});
