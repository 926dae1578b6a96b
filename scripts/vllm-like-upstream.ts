/**
 * The vLLM-like upstream (src/bench/upstream) as a process: a stand-in for vLLM's OpenAI
 * server that writes what vLLM writes, one SSE event per engine step.
 *
 * Run on its own: node scripts/vllm-like-upstream.ts [--port 8000] [--interval-ms 0]
 * [--model NAME] [--writes per-event|one]; it prints its URL. Started with an IPC channel
 * (child_process.fork, as `npm run bench:proxy` starts it), it sends `{ url }` once listening
 * and answers `{ type: "stats" }` with its counters.
 */
import { scriptArgs } from "../src/bench/script-entry.ts";
import { announceUpstream, UPSTREAM_SPEC } from "../src/bench/upstream/upstream-process.ts";
import { startVllmLikeUpstream } from "../src/bench/upstream/vllm-like-server.ts";

const { values, parsed } = scriptArgs(UPSTREAM_SPEC);
const upstream = await startVllmLikeUpstream({
  host: values.host,
  port: Number(values.port),
  model: values.model,
  intervalMs: Number(values["interval-ms"]),
  writes: parsed.writes,
});
announceUpstream(upstream, values.model);
