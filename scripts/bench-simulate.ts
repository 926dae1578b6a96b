/**
 * Benchmark of `maitred simulate` on its target configuration: the DeepSeek trace on 2 ×
 * llama-3.1-8b-h100 engines, one simulated hour; tr against default and the oracle at 128 and
 * 16 programs, each target met or not, and the wall time per simulated hour. `--sweep` and the
 * variant lists add tr variants at 128 programs and their table. The runs are
 * src/bench/sims/simulate-targets.ts, in this process.
 *
 *   npm run bench:simulate -- [--seeds 1] [--sweep] [--headroom-steps 0,4] [--ageing 0,900]
 *     [--buffers 100,2000] [--no-credit] [--warmup 10m] [--duration 50m] [--json out.json]
 */
import { scriptArgs } from "../src/bench/script-entry.ts";
import { PROCESS_OUT } from "../src/bench/sims/scorecard.ts";
import { SIMULATE_SPEC, simulateTargets } from "../src/bench/sims/simulate-targets.ts";

await simulateTargets(scriptArgs(SIMULATE_SPEC), PROCESS_OUT);
