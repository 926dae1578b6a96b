/**
 * The vLLM-like upstream as a process (scripts/vllm-like-upstream.ts): its flags, and how it
 * talks to a parent that forked it. Started with an IPC channel (child_process.fork, as
 * `npm run bench:proxy` starts it), it sends `{ url }` once listening and answers
 * `{ type: "stats" }` with its counters; on its own it prints its URL.
 */
import { integer, nonNegative, oneOf } from "../../config/values.ts";
import type { ScriptSpec } from "../script-args.ts";
import { DEFAULT_MODEL } from "./upstream-request.ts";
import type { VllmLikeUpstream } from "./vllm-like-server.ts";

export const UPSTREAM_SPEC = {
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

/** Tells the parent (or, without one, the terminal) where the upstream listens. */
export function announceUpstream(upstream: VllmLikeUpstream, model: string): void {
  if (!process.send) {
    console.log(`vLLM-like upstream on ${upstream.url} (model ${model})`);
    return;
  }
  process.send({ url: upstream.url });
  process.on("message", (m: { type?: string }) => {
    if (m.type === "stats") process.send?.({ stats: upstream.stats() });
  });
  // The parent going away (its IPC channel closing) ends this process too.
  process.on("disconnect", () => void upstream.close().then(() => process.exit(0)));
}
