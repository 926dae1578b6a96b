/**
 * A test reporter for scripts/run-tests.ts: the run time of each test file, as one JSON object
 * (file path → milliseconds), so the next run can deal files to processes by how long they take.
 */
import { relative } from "node:path";
import type { TestEvent } from "node:test/reporters";

export default async function* testTimes(source: AsyncIterable<TestEvent>) {
  const times: Record<string, number> = {};
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { data } = event;
    if (data.nesting !== 0 || data.file === undefined) continue;
    const file = relative(process.cwd(), data.file);
    times[file] = (times[file] ?? 0) + data.details.duration_ms;
  }
  yield JSON.stringify(times);
}
