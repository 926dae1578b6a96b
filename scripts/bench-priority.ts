/**
 * The targets for priority classes, measured in the simulator at overload (2 ×
 * llama-3.1-8b-h100, 128 programs, 20% interactive chat and 80% bulk DeepSeek agents, one
 * simulated hour): per seed priorities off, then on; interactive TTFT p95, total steps/min and
 * the longest bulk wait, each pass/fail. The runs are src/bench/sims/priority-targets.ts, in
 * this process.
 *
 *   npm run bench:priority -- [--seeds 1,2,3] [--concurrency 128] [--workload <mix>]
 *     [--warmup 10m] [--duration 50m] [--classes <json>] [--queue-policy ta] [--json out.json]
 */
import { scriptArgs } from "../src/bench/script-entry.ts";
import { PRIORITY_SPEC, priorityTargets } from "../src/bench/sims/priority-targets.ts";
import { PROCESS_OUT } from "../src/bench/sims/scorecard.ts";

await priorityTargets(scriptArgs(PRIORITY_SPEC), PROCESS_OUT);
