/**
 * The plan oracle (test/oracle/*.oracle.ts): run it with `npm run test:oracle`, which starts the hub kube-apiserver for
 * the whole run (scripts/test-envtest.ts); the suite starts a spoke API server and one real OCM work agent
 * per spoke slot (test/support/oracle-world.ts). Needs KUBEBUILDER_ASSETS and OCM_ASSETS. The reporter fails
 * a run in which no test ran, and under --ci one with a skipped test.
 */
import envtest from './jest.envtest.config.js';

export default {
  ...envtest,
  roots: ['<rootDir>/test/oracle'],
  // `.oracle.ts`, not `.test.ts`: the unit run (jest.config.js) must not find it.
  testMatch: ['**/*.oracle.ts'],
  reporters: ['default', '<rootDir>/scripts/jest-require-tests.js'],
  testTimeout: 1200000,
};
