/**
 * The tr scheduler's scorecard on `maitred simulate`: tr ÷ default and ÷ oracle steps/min, step
 * p99 and the longest pause, at two concurrencies and over tool-time scales, per seed, printed
 * as markdown (`--preset all`: six settings, then their summary). The runs and tables are
 * src/bench/sims/tr-scorecard.ts; each run is a child process of this script (`--one`).
 *
 *   npm run bench:tr -- [--seeds 7,1] [--quick] [--preset all] [--jobs 2] [--json out.json]
 */
import { scriptArgs } from "../src/bench/script-entry.ts";
import { scorecardEntry } from "../src/bench/sims/scorecard.ts";
import { TR_RUNS, TR_SPEC, trScorecard } from "../src/bench/sims/tr-scorecard.ts";

const args = scriptArgs(TR_SPEC);
await scorecardEntry(TR_SPEC.name, args.values.one, import.meta.url, TR_RUNS, (io) =>
  trScorecard(args, io),
);
