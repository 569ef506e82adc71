/**
 * The fast tier (`npm run test:unit`): the model, the constructs without whole-program TypeScript compiles, and the
 * reconcilers against their in-memory world. No API server, no child process, no CLI: the inner loop of a change.
 * `npm test` runs these and the rest.
 */
import base from './jest.config.js';

export default {
  ...base,
  roots: ['<rootDir>/test/model', '<rootDir>/test/constructs', '<rootDir>/test/controller/reconcilers'],
  testPathIgnorePatterns: [
    ...base.testPathIgnorePatterns,
    // whole-program compiles and generated-code checks: npm test runs them
    '<rootDir>/test/constructs/public-api.test.ts',
    '<rootDir>/test/constructs/readme-api.test.ts',
  ],
};
