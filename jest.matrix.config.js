/**
 * The seed matrices of the end-to-end suites (test/e2e/*.matrix.test.ts): run them with
 * `npm run test:matrix`, CI's stage after `npm test`. `npm test` runs every scenario once on the plain
 * double and once on the realistic double; this runs the same scenarios for many more seeds. A run in
 * which no test ran fails, and so does one that skipped tests under --ci (scripts/jest-require-tests.js).
 */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['**/*.matrix.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/envtest/'],
  reporters: ['default', '<rootDir>/scripts/jest-require-tests.js'],
  testTimeout: 180000,
};
