/**
 * The monitoring suites (test/monitoring/): `promtool test rules` on the rendered alerts, and a real
 * Prometheus scraping the controller on a kube-apiserver of its own. They need Debian's `prometheus`
 * package and KUBEBUILDER_ASSETS, so they are a stage of their own: `npm run test:monitoring`. The reporter
 * fails a run in which no test ran, and under --ci one with a skipped test.
 */
import base from './jest.config.js';

export default {
  ...base,
  roots: ['<rootDir>/test/monitoring'],
  testPathIgnorePatterns: ['/node_modules/'],
  reporters: ['default', '<rootDir>/scripts/jest-require-tests.js'],
  maxWorkers: 1,
  testTimeout: 240000,
};
