/**
 * `bench:memory`: what a live program costs the router in memory: its RSS and V8 heap at
 * rising numbers of live programs, and both per live program, with the router and its
 * simulated backends each in its own process. The run is src/bench/overhead/memory-bench.ts.
 *
 *   node scripts/bench-memory.ts [--levels 100,1000,10000] [--concurrency 32] [--backends 2]
 *       [--settle-reads 6] [--warmup 500] [--json /tmp/bench-memory.json]
 */
import { writeFileSync } from "node:fs";
import {
  BENCH_MEMORY_SPEC,
  memoryTable,
  runMemoryBench,
} from "../src/bench/overhead/memory-bench.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";

const { values } = scriptArgs(BENCH_MEMORY_SPEC);
const levels = values.levels.split(",").map(Number);
const concurrency = Number(values.concurrency);
const warmup = Number(values.warmup);
const { warmupFailed, rows } = await runMemoryBench({
  levels,
  concurrency,
  warmup,
  settleReads: Number(values["settle-reads"]),
  backends: Number(values.backends),
});
if (warmupFailed > 0) console.log(`warm-up: ${warmupFailed} of ${warmup} requests failed`);
console.log(memoryTable(rows));
writeFileSync(values.json, `${JSON.stringify({ levels, concurrency, warmup, rows }, null, 2)}\n`);
console.log(`(JSON: ${values.json})`);
