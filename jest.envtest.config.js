/**
 * The real-server suites (test/envtest/): run them with `npm run test:envtest`, which starts one
 * kube-apiserver for the whole run (scripts/test-envtest.ts). They share that server, so they run one
 * file at a time, each in namespaces of its own.
 */
import base from './jest.config.js';

export default {
  ...base,
  roots: ['<rootDir>/test/envtest'],
  testPathIgnorePatterns: [],
  maxWorkers: 1,
  testTimeout: 180000,
};
