/**
 * The vLLM-like upstream (src/bench/vllm-like-upstream.ts) as a process: a stand-in for vLLM's
 * OpenAI server that writes what vLLM writes, one SSE event per engine step.
 *
 * Run on its own: node scripts/vllm-like-upstream.ts [--port 8000] [--interval-ms 0]
 * [--model NAME] [--writes per-event|one]; it prints its URL. Started with an IPC channel
 * (child_process.fork, as `npm run bench:proxy` starts it), it sends `{ url }` once listening
 * and answers `{ type: "stats" }` with its counters.
 */
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import { DEFAULT_MODEL, startVllmLikeUpstream } from "../src/bench/vllm-like-upstream.ts";
import { integer, nonNegative, oneOf } from "../src/config/values.ts";

const SPEC = {
  name: "vllm-like-upstream",
  usage: "node scripts/vllm-like-upstream.ts [flags]",
  summary:
    "A stand-in for vLLM's OpenAI server that writes what vLLM writes, one SSE event per engine step, for the proxy benchmark (npm run bench:proxy starts it itself).",
  runtime: "until stopped (Ctrl-C, SIGTERM, or its parent's IPC channel closing)",
  flags: {
    host: { arg: "<host>", default: "127.0.0.1", description: "address to listen on" },
    port: {
      arg: "<port>",
      default: "0",
      description: "port to listen on (0: any free port)",
      check: integer(0, 65_535),
    },
    model: { arg: "<name>", default: DEFAULT_MODEL, description: "served model name" },
    "interval-ms": {
      arg: "<ms>",
      default: "0",
      description: "time between engine steps (0: every turn of the event loop)",
      check: nonNegative(),
    },
    writes: {
      arg: "<per-event|one>",
      default: "per-event",
      description: "one write per SSE event, as vLLM, or each whole stream in one write",
      check: oneOf(["per-event", "one"]),
    },
  },
} satisfies ScriptSpec;

async function cli(): Promise<void> {
  const { values, parsed } = scriptArgs(SPEC);
  const upstream = await startVllmLikeUpstream({
    host: values.host,
    port: Number(values.port),
    model: values.model,
    intervalMs: Number(values["interval-ms"]),
    writes: parsed.writes,
  });
  if (process.send) {
    process.send({ url: upstream.url });
    process.on("message", (m: { type?: string }) => {
      if (m.type === "stats") process.send?.({ stats: upstream.stats() });
    });
    // The parent going away (its IPC channel closing) ends this process too.
    process.on("disconnect", () => void upstream.close().then(() => process.exit(0)));
  } else {
    console.log(`vLLM-like upstream on ${upstream.url} (model ${values.model})`);
  }
}

await cli();
