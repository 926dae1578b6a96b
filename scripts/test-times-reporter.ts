/**
 * A test reporter for scripts/run-tests.ts: the run time of each test file (file path →
 * milliseconds), so the next run can deal files to processes by how long they take, and the
 * process's counts (tests, pass, fail…), so the runner prints one summary for all its
 * processes. One JSON object, a `ShardReport`: `{ "times": {…}, "counts": {…} | null }`.
 */
import { relative } from "node:path";
import type { TestEvent } from "node:test/reporters";
import type { ShardReport } from "../src/util/shard-report.ts";

export default async function* testTimes(source: AsyncIterable<TestEvent>) {
  const report: ShardReport = { times: {}, counts: null };
  for await (const event of source) {
    if (event.type === "test:summary") {
      // The run's own summary has no file; with one module graph per process there is one.
      // (Node reports `failed` too; its type declarations leave it out.)
      if (event.data.file === undefined)
        report.counts = event.data.counts as unknown as NonNullable<ShardReport["counts"]>;
      continue;
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { data } = event;
    if (data.nesting !== 0 || data.file === undefined) continue;
    const file = relative(process.cwd(), data.file);
    report.times[file] = (report.times[file] ?? 0) + data.details.duration_ms;
  }
  yield JSON.stringify(report);
}
