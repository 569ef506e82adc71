/**
 * The real OCM work agent suites (test/ocm/): run them with `npm run test:ocm`, which starts the hub
 * kube-apiserver for the whole run (scripts/test-envtest.ts); each file starts a spoke API server and the
 * agent of its own (test/support/real-ocm.ts). One file at a time: each starts two processes of size.
 * The reporter fails a run in which no test ran, and under --ci one with a skipped test.
 */
import envtest from './jest.envtest.config.js';

export default {
  ...envtest,
  roots: ['<rootDir>/test/ocm'],
  reporters: ['default', '<rootDir>/scripts/jest-require-tests.js'],
  testTimeout: 240000,
};
