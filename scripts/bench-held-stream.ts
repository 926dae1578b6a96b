/**
 * bench:held-stream: a waiter's stream held behind a holder's long answer, on the wall clock;
 * its head, the keep-alive comments and their gaps, its first event, and that it ends with
 * [DONE]. The run is src/bench/scenarios/held-stream.ts.
 *
 *   npm run bench:held-stream -- [--holder-tokens 300] [--time-scale 0.05] [--hold-keepalive off]
 */
import {
  HELD_STREAM_SPEC,
  heldStreamLines,
  runHeldStream,
} from "../src/bench/scenarios/held-stream.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";

const { values: args } = scriptArgs(HELD_STREAM_SPEC);
const { holder, waiter } = await runHeldStream({
  holderTokens: Number(args["holder-tokens"]),
  timeScale: Number(args["time-scale"]),
  holdKeepalive: args["hold-keepalive"],
  progress,
});
for (const line of heldStreamLines(args["hold-keepalive"], holder, waiter)) console.log(line);
