/**
 * bench:engine: the simulated engine alone, in virtual time; simulated seconds per wall second,
 * steps, preemptions and prefix hits for N agent programs on one engine. The run is
 * src/bench/scenarios/engine-speed.ts.
 *
 *   npm run bench:engine -- [--agents 128] [--hours 1] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import {
  ENGINE_SPEC,
  engineSpeedLines,
  runEngineSpeed,
} from "../src/bench/scenarios/engine-speed.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";

const { values: args } = scriptArgs(ENGINE_SPEC);
const result = runEngineSpeed({
  agents: Number(args.agents),
  hours: Number(args.hours),
  profile: args.profile,
  seed: Number(args.seed),
});
for (const line of engineSpeedLines(result)) console.log(line);
if (args.json) writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
