/**
 * bench:backend-kill: what a dying backend costs; `maitred serve --router tr` over N simulated
 * backends, one killed with SIGKILL part-way: steps before and after, requests lost, streams
 * cut, retries, time to unhealthy. Exits 1 if any request was lost. The run is
 * src/bench/scenarios/backend-kill.ts.
 *
 *   npm run bench:backend-kill -- [--backends 4] [--kill-at 20s] [--duration 60s] [--control]
 */
import { BACKEND_KILL_SPEC, runBackendKill } from "../src/bench/scenarios/backend-kill.ts";
import { backendKillLines } from "../src/bench/scenarios/backend-kill-report.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";

const { values: args, parsed } = scriptArgs(BACKEND_KILL_SPEC);
const result = await runBackendKill({
  numBackends: Number(args.backends),
  concurrency: Number(args.concurrency),
  timeScale: Number(args["time-scale"]),
  killAtMs: parsed["kill-at"],
  durationMs: parsed.duration,
  streamShare: Number(args["stream-share"]),
  numGpuBlocks: Number(args["num-gpu-blocks"]),
  seed: Number(args.seed),
  workload: args.workload,
  control: args.control,
  progress,
});
for (const line of backendKillLines(result)) console.log(line);
process.exitCode = result.lost === 0 ? 0 : 1;
