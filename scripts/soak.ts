/**
 * A day of faults (`npm run soak`): `maitred serve` (or `--cells N` behind HAProxy) over
 * simulated backends, each its own process, under a closed loop of agent programs at a high
 * time scale, faults on a seeded schedule, the router's invariants checked all along. Prints
 * violations as they happen, then its tables; exits 1 if an invariant failed. The run is
 * src/bench/soak/run.ts, its flags src/bench/soak/spec.ts, its tables src/bench/soak/report.ts.
 */
import { writeFileSync } from "node:fs";
import { scriptArgs } from "../src/bench/script-entry.ts";
import { soakChart } from "../src/bench/soak/chart.ts";
import { routerCpuSets } from "../src/bench/soak/cpus.ts";
import { soakPrerequisiteProblem } from "../src/bench/soak/fleet.ts";
import { soakJson, soakReport } from "../src/bench/soak/report.ts";
import { runSoak } from "../src/bench/soak/run.ts";
import { SOAK_SPEC, soakSettings } from "../src/bench/soak/spec.ts";
import { EVENT_LOOP_SAMPLING_MS } from "../src/metrics/process-metrics.ts";

const args = scriptArgs(SOAK_SPEC);
const settings = soakSettings(args);
const problem = soakPrerequisiteProblem(settings);
if (problem !== null) {
  console.error(problem);
  process.exit(2);
}
const cpus = routerCpuSets(settings.routerCpus);
const outcome = await runSoak(settings, { cpus, log: (line) => console.log(line) });
for (const block of soakReport(outcome, EVENT_LOOP_SAMPLING_MS)) console.log(block);
if (args.values.json !== undefined) writeFileSync(args.values.json, soakJson(outcome));
if (args.values.svg !== undefined)
  writeFileSync(args.values.svg, soakChart(outcome.samples, EVENT_LOOP_SAMPLING_MS));
process.exit(outcome.violations.length === 0 ? 0 : 1);
