// Ends a jest run with one plain line, "N passed, N failed, N skipped", which CI reads as
// the test count (jest's own summary is not a format it knows). Written to stderr, after
// jest's summary there; with TOOLNEXUS_TEST_SUMMARY set, also to that file, so .ci/run can
// repeat it as its very last line.
const fs = require('node:fs');

// With a `label` option (a second run, e.g. jest.cv015.config.js) it says "label: N tests ok,
// N not ok, N skipped" instead and writes no file: only the main run's line has the CI shape.
// With TOOLNEXUS_TEST_MATRIX set (.ci/run's runs on Node 24, 22 and 20) the line on stderr is
// labelled with the Node version that ran jest, "node 22.23.5: N tests ok, …", and the plain line
// goes only to the TOOLNEXUS_TEST_SUMMARY file, which .ci/run adds up into its last line.
class SummaryLineReporter {
  constructor(globalConfig, options = {}) {
    this.label = options.label;
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    this.sayWhatRan(results);
    const counts = `${results.numPassedTests} tests ok, ${results.numFailedTests} not ok, ${results.numPendingTests} skipped`;
    if (this.label) {
      process.stderr.write(`\n${this.label}: ${counts}\n`);
      return;
    }
    const line = `${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped`;
    if (process.env.TOOLNEXUS_TEST_MATRIX) {
      process.stderr.write(`\nnode ${process.versions.node}: ${counts}\n`);
      if (process.env.TOOLNEXUS_TEST_SUMMARY) fs.writeFileSync(process.env.TOOLNEXUS_TEST_SUMMARY, `${line}\n`);
      return;
    }
    process.stderr.write(`\n${line}\n`);
    if (process.env.TOOLNEXUS_TEST_SUMMARY) fs.writeFileSync(process.env.TOOLNEXUS_TEST_SUMMARY, `${line}\n`);
  }

  /**
   * One line before the summary: how long the run took, and, for `npm test`'s quick set, how
   * many files it left to the full run and how to run them (scripts/test-sets.js), so that
   * nothing is left out without a word.
   */
  sayWhatRan(results) {
    const minutes = ((Date.now() - results.startTime) / 60_000).toFixed(1);
    const ran = `${results.numTotalTestSuites} test files in ${minutes} min`;
    const testSets = require('./test-sets.js');
    if (this.label || !testSets.quickRun()) {
      process.stderr.write(`\n${ran}\n`);
      return;
    }
    const left = testSets.fullOnlyFiles(this.rootDir).length;
    const kinds = [...new Set(testSets.FULL_ONLY.map(({ why }) => why))].join('; ');
    process.stderr.write(`\nquick set: ${ran}; ${left} slower files left to the full run (${kinds}): TOOLNEXUS_TESTS=all npm test\n`);
  }
}
module.exports = SummaryLineReporter;
