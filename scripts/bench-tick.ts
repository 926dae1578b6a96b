/**
 * `bench:tick`: the scheduler core's tick with N tracked programs on 64 backends (pause,
 * steady, resume and lend storms), a request turn while a queue waits, and heap per tracked
 * program. The measure is src/bench/overhead/tick-bench.ts.
 *
 *   node_modules/.bin/node --expose-gc scripts/bench-tick.ts [--sizes 10000,100000]
 *     [--backends 64] [--repeats 5] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import {
  BENCH_TICK_SPEC,
  benchTickSize,
  heapPerProgram,
  memoryLine,
  tickLine,
  WARMUP_PROGRAMS,
} from "../src/bench/overhead/tick-bench.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";

const { values: args } = scriptArgs(BENCH_TICK_SPEC);
const sizes = args.sizes.split(",").map(Number);
const o = {
  backends: Number(args.backends),
  repeats: Number(args.repeats),
  steadyTicks: Number(args["steady-ticks"]),
};
progress(`warm-up: ${WARMUP_PROGRAMS} programs`);
benchTickSize(WARMUP_PROGRAMS, { ...o, repeats: 2 });
const results = sizes.map((n, i) => {
  progress(`size ${i + 1}/${sizes.length}: ${n} programs, ${o.repeats} worlds`);
  return benchTickSize(n, o);
});
for (const r of results) console.log(tickLine(r));
progress("heap per program");
const memory = heapPerProgram(Math.max(...sizes), o.backends);
console.log(memoryLine(memory));
if (args.json !== undefined)
  writeFileSync(args.json, `${JSON.stringify({ results, memory }, null, 2)}\n`);
