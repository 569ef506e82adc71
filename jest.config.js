/** Jest runs the TypeScript sources as ESM through ts-jest (type-checking is `npm run typecheck`). */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The real-server suites run in their own stage: npm run test:envtest (jest.envtest.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/envtest/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, isolatedModules: true, diagnostics: false }],
  },
  testTimeout: 60000,
};
