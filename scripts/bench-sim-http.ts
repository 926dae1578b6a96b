/**
 * bench:sim-http: tiny chat requests per second the simulated backend's HTTP surface sustains,
 * plain then streamed, with p50/p99 latency. The run is src/bench/scenarios/sim-http.ts.
 *
 *   npm run bench:sim-http -- [--seconds 10] [--connections 64] [--in-process] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import {
  runSimHttp,
  SIM_HTTP_SPEC,
  simHttpJson,
  simHttpLine,
} from "../src/bench/scenarios/sim-http.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";

const { values: args } = scriptArgs(SIM_HTTP_SPEC);
const o = {
  seconds: Number(args.seconds),
  warmupS: Number(args.warmup),
  connections: Number(args.connections),
  timeScale: args["time-scale"],
  inProcess: args["in-process"],
};
const results = await runSimHttp(o, (r) => console.log(simHttpLine(r, o)));
if (args.json) writeFileSync(args.json, simHttpJson(o, results));
