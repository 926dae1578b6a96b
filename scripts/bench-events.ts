/**
 * `bench:events`: what maitred's own code costs per SSE event, without sockets: CPU µs per
 * event of the stream relay and the plain-answer rebuild of each API's dialect, at 4, 64 and
 * 512 tokens. The measure is src/bench/overhead/event-costs.ts.
 *
 *   node scripts/bench-events.ts [--seconds 2] [--apis chat]
 */
import {
  BENCH_EVENTS_SPEC,
  eventCostsReport,
  measureEventCosts,
} from "../src/bench/overhead/event-costs.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import { DIALECTS } from "../src/proxy/dialects/all-dialects.ts";

const { values, parsed } = scriptArgs(BENCH_EVENTS_SPEC);
const seconds = Number(values.seconds);
console.log(eventCostsReport(measureEventCosts(DIALECTS, parsed.apis, { seconds }), seconds));
