/** Jest runs the TypeScript sources as ESM through ts-jest (type-checking is `npm run typecheck`). */
import { availableParallelism } from 'node:os';

export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Stages of their own: the real-server suites (npm run test:envtest, jest.envtest.config.js), the real
  // OCM work agent suites (npm run test:ocm, jest.ocm.config.js), promtool and a real Prometheus (npm run
  // test:monitoring, jest.monitoring.config.js) and the seed matrices of the end-to-end suites (npm run
  // test:matrix, jest.matrix.config.js).
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/envtest/',
    '<rootDir>/test/ocm/',
    '<rootDir>/test/monitoring/',
    '\\.matrix\\.test\\.ts$',
  ],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testTimeout: 60000,
  // At least two workers, also on a 2-core machine (jest's default there is one): the end-to-end and CLI
  // suites spend most of their time waiting on the API double, timers and child processes, so two of
  // them side by side nearly halve the wall time of `npm test`.
  maxWorkers: Math.max(2, availableParallelism() - 1),
};
