/**
 * bench:idle-gpu: the small-backend case over HTTP; five agents on one backend that fits one,
 * per step its wall time and how long the router held it, and the total in scheduler ticks.
 * The run is src/bench/scenarios/idle-gpu.ts.
 *
 *   npm run bench:idle-gpu -- [--time-scale 5] [--lend-after 1]
 */
import { IDLE_GPU_SPEC, idleGpuLines, runIdleGpu } from "../src/bench/scenarios/idle-gpu.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";

const { values: args } = scriptArgs(IDLE_GPU_SPEC);
const result = await runIdleGpu({
  scale: Number(args["time-scale"]),
  lendAfter: args["lend-after"],
  progress,
});
for (const line of idleGpuLines(result)) console.log(line);
