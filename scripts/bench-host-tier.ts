/**
 * What a host-memory KV tier changes: per workload and seed a markdown table with a row per
 * host tier size and default, tr and the oracle side by side (steps/min and their ratios, step
 * p99, prompt tokens prefilled again or loaded back from host memory). The runs, tables and
 * chart are src/bench/sims/host-tier.ts; each run is a child process of this script (`--one`),
 * or `--from-json` reads saved runs.
 *
 *   npm run bench:host-tier -- [--sizes 0,25,50,100,200,400] [--seeds 7,1] [--quick]
 *     [--jobs 2] [--json out.json] [--svg chart.svg] [--from-json a.json[,b.json]]
 */
import { scriptArgs } from "../src/bench/script-entry.ts";
import { HOST_TIER_RUNS, HOST_TIER_SPEC, hostTierScorecard } from "../src/bench/sims/host-tier.ts";
import { scorecardEntry } from "../src/bench/sims/scorecard.ts";

const args = scriptArgs(HOST_TIER_SPEC);
await scorecardEntry(HOST_TIER_SPEC.name, args.values.one, import.meta.url, HOST_TIER_RUNS, (io) =>
  hostTierScorecard(args, io),
);
