/**
 * tr against the default router over a grid of host KV tiers × workloads × concurrencies ×
 * seeds, with the oracle at the largest concurrency, and a fixed batch of programs (makespan,
 * completion p99, first-response spread), as markdown; the last line of stdout is the grid's
 * lowest tr ÷ default. The runs, tables and chart are src/bench/sims/tier-grid-scorecard.ts;
 * each run is a child process of this script (`--one`), or `--from-json` reads saved runs.
 *
 *   npm run bench:tier-grid -- [--sizes 0,50,200,400] [--workloads deepseek,gemini,claude-code]
 *     [--quick] [--no-batch] [--jobs 2] [--json out.json] [--svg chart.svg]
 *     [--from-json a.json[,b.json]]
 */
import { scriptArgs } from "../src/bench/script-entry.ts";
import { scorecardEntry } from "../src/bench/sims/scorecard.ts";
import {
  TIER_GRID_RUNS,
  TIER_GRID_SPEC,
  tierGridScorecard,
} from "../src/bench/sims/tier-grid-scorecard.ts";

const { values } = scriptArgs(TIER_GRID_SPEC);
await scorecardEntry(TIER_GRID_SPEC.name, values.one, import.meta.url, TIER_GRID_RUNS, (io) =>
  tierGridScorecard(values, io),
);
