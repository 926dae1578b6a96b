/**
 * The frontier `--tail` names, measured: per workload a markdown table with a row per preset
 * (bounded, balanced, throughput) and the default router as the reference, what each buys in
 * steps/min and costs in the longest wait; on DeepSeek the throughput preset against its two
 * bounds given by hand. The runs and tables are src/bench/sims/tail-scorecard.ts; each run is a
 * child process of this script (`--one`).
 *
 *   npm run bench:tail -- [--seeds 7,1] [--workloads deepseek,gemini,claude-code] [--quick]
 *     [--jobs 2] [--json out.json]
 */
import { scriptArgs } from "../src/bench/script-entry.ts";
import { scorecardEntry } from "../src/bench/sims/scorecard.ts";
import { TAIL_RUNS, TAIL_SPEC, tailScorecard } from "../src/bench/sims/tail-scorecard.ts";

const args = scriptArgs(TAIL_SPEC);
await scorecardEntry(TAIL_SPEC.name, args.values.one, import.meta.url, TAIL_RUNS, (io) =>
  tailScorecard(args, io),
);
