/**
 * Declaring a suite that runs against a real API server: on the cluster PULLFLEET_E2E_KUBECONFIG names
 * (scripts/test-envtest.ts sets it to the envtest server it started), or as one skipped test that says
 * how to enable it. `npm run test:envtest` refuses a CI run in which these suites were skipped.
 */
import { describe, test } from '@jest/globals';
import { ENVTEST_SKIP_MESSAGE } from './envtest.js';
import { realServerKubeconfig } from './envtest-cluster.js';

export function describeRealServer(name: string, body: (kubeconfigPath: string) => void): void {
  const path = realServerKubeconfig();
  if (!path) {
    describe(name, () => test.skip(ENVTEST_SKIP_MESSAGE, () => undefined));
    return;
  }
  describe(`${name} (real API server)`, () => body(path));
}
