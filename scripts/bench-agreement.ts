/**
 * bench:agreement: do the simulator's figures hold over HTTP? tr ÷ default steps/min over
 * loopback HTTP on a virtual clock and in `maitred simulate`, side by side; they should agree
 * within 15 %. The run is src/bench/scenarios/agreement.ts.
 *
 *   npm run bench:agreement -- [--workload deepseek] [--concurrency 32] [--backends 2]
 *       [--num-gpu-blocks <n>] [--warmup 1m] [--duration 5m] [--seed 1] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import {
  AGREEMENT_SPEC,
  agreementJson,
  agreementLines,
  runAgreement,
} from "../src/bench/scenarios/agreement.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";

const { values: args } = scriptArgs(AGREEMENT_SPEC);
const result = await runAgreement(args, progress);
for (const line of agreementLines(args, result)) console.log(line);
if (args.json) writeFileSync(args.json, agreementJson(args, result));
