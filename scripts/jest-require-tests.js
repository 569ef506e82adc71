/**
 * A jest reporter for stages that must run what they select (`npm run test:matrix`): the run fails when
 * no test ran, and under --ci (or CI=true) also when any test was skipped, so an environment variable or
 * a stray `.skip` cannot quietly empty the stage.
 */
export default class RequireTestsReporter {
  constructor(globalConfig) {
    this.ci = Boolean(globalConfig.ci);
    this.error = undefined;
  }

  onRunComplete(_contexts, results) {
    const ran = results.numPassedTests + results.numFailedTests;
    if (ran === 0) this.error = new Error('no test ran');
    else if (this.ci && (results.numPendingTests > 0 || results.numTodoTests > 0))
      this.error = new Error(`${results.numPendingTests + results.numTodoTests} test(s) were skipped`);
    if (this.error) process.stderr.write(`\nrequire-tests: ${this.error.message}; this stage fails\n`);
  }

  getLastError() {
    return this.error;
  }
}
