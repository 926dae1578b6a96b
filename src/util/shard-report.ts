/**
 * What one process of `npm test` reports back to scripts/run-tests.ts, written by its reporter
 * (scripts/test-times-reporter.ts) as one JSON object: the run time of each test file (file
 * path → milliseconds), so the next run can deal files to processes by how long they take, and
 * the process's counts, so the runner prints one summary for all its processes. Here, not in
 * either script, because nothing imports from scripts/.
 */
export interface ShardReport {
  times: Record<string, number>;
  counts: {
    tests: number;
    suites: number;
    passed: number;
    failed: number;
    cancelled: number;
    skipped: number;
    todo: number;
  } | null;
}
