/**
 * A held stream on the wall clock: `maitred serve --router tr` in front of one simulated vLLM
 * backend whose KV holds one program. A first program (`holder`) streams a long answer that
 * fills it; a second (`waiter`) sends a streaming request while it runs, which the router
 * holds until the holder's turn has ended and the next tick finds the engine idle. Measured at
 * the waiter's client: the time from its request to the response head, the comments that come
 * while it is held and the gaps between them (one every 15 s), when its first event came, and
 * that the stream ran to `data: [DONE]`.
 *
 * Run by hand (it takes about as long as the holder's answer, 45 s by default):
 *
 *   node_modules/.bin/node scripts/bench-held-stream.ts [--holder-tokens 300] [--time-scale 0.05]
 *     [--hold-keepalive off]
 */
import { request } from "node:http";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { timeScaleFlag } from "../src/bench/script-flags.ts";
import { resolveRouterConfig } from "../src/config/load-config.ts";
import { ROUTER_SETTINGS } from "../src/config/router-config.ts";
import { settingOf } from "../src/config/setting.ts";
import { integer } from "../src/config/values.ts";
import { startRouter } from "../src/service/service.ts";

const SPEC = {
  name: "bench:held-stream",
  summary:
    "A held stream on the wall clock: a waiter's stream held behind a holder's long answer; its head, the keep-alive comments and their gaps, its first event, and that it ends with [DONE].",
  runtime:
    "about 45 s, as long as the holder's answer (recorded: the held stream's first event at 44.6 s); scales with --holder-tokens ÷ --time-scale",
  flags: {
    // Output tokens of the holder's answer, and how fast the engine runs: together, how long
    // the waiter is held.
    "holder-tokens": {
      arg: "<n>",
      default: "300",
      description: "output tokens of the holder's answer",
      check: integer(1, 1_000_000),
    },
    "time-scale": timeScaleFlag("0.05", "the engine runs S times real time (below 1: slower)"),
    "hold-keepalive": {
      arg: "<on|off>",
      default: "on",
      description: "the router's --hold-keepalive",
      check: settingOf(ROUTER_SETTINGS, "hold-keepalive", "maitred serve").schema,
    },
  },
} satisfies ScriptSpec;
const { values: args } = scriptArgs(SPEC);

const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
/** 150 blocks of 16 tokens: the holder's prompt and answer fill it, so the waiter waits. */
const BLOCKS = 150;
const HOLDER_PROMPT_TOKENS = 2000;

const config = resolveRouterConfig({
  flags: {
    backends: "sim:1",
    port: "0",
    "log-level": "warn",
    "hold-keepalive": args["hold-keepalive"],
  },
  env: {},
});
config.sim = { numGpuBlocks: BLOCKS, timeScale: Number(args["time-scale"]) };
const router = await startRouter(config);

/**
 * `tokens` tokens of text: four-letter words are one token each to the simulated tokenizer and
 * five characters each, the ratio the router estimates a prompt by before any usage, so its
 * books see the holder fill the KV from its first request.
 */
const WORDS = ["time", "work", "data", "step", "tool", "call", "file", "line"];
const text = (tokens: number) =>
  Array.from({ length: tokens }, (_, i) => WORDS[i % WORDS.length]).join(" ");

interface Timeline {
  /** ms from the request to the response head. */
  headMs: number | null;
  status: number | null;
  held: string | null;
  /** [ms from the request, the comment line]. */
  comments: [number, string][];
  firstEventMs: number | null;
  events: number;
  done: boolean;
  endMs: number | null;
  /** What came that was neither a comment nor an event (an error answered as JSON). */
  other: string;
}

/** A streaming chat completion, each piece of its answer timed on the wall clock. */
function stream(programId: string, prompt: string, maxTokens: number): Promise<Timeline> {
  const t: Timeline = {
    headMs: null,
    status: null,
    held: null,
    comments: [],
    firstEventMs: null,
    events: 0,
    done: false,
    endMs: null,
    other: "",
  };
  const t0 = performance.now();
  const since = () => Math.round(performance.now() - t0);
  return new Promise((resolve, reject) => {
    const req = request(
      `${router.url}/v1/chat/completions`,
      { method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        t.headMs = since();
        t.status = res.statusCode ?? null;
        t.held = (res.headers["x-maitred-held"] as string | undefined) ?? null;
        let carry = "";
        res.setEncoding("utf8");
        res.on("data", (piece: string) => {
          carry += piece;
          const lines = carry.split("\n");
          carry = lines.pop() ?? "";
          for (const line of lines) {
            if (line.startsWith(":")) t.comments.push([since(), line]);
            else if (line === "data: [DONE]") t.done = true;
            else if (line.startsWith("data: ")) {
              t.events++;
              t.firstEventMs ??= since();
              if (line.includes('"error"')) t.other += line;
            } else t.other += line;
          }
        });
        res.on("end", () => {
          t.endMs = since();
          resolve(t);
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(
      JSON.stringify({
        model: MODEL,
        program_id: programId,
        stream: true,
        messages: [{ role: "user", content: prompt }],
        max_tokens: maxTokens,
        ignore_eos: true,
      }),
    );
  });
}

progress("holder streaming; the waiter follows and is held until the holder's turn ends");
const holder = stream("holder", text(HOLDER_PROMPT_TOKENS), Number(args["holder-tokens"]));
// Half a second of wall time puts the holder on the engine before the waiter arrives.
await new Promise((r) => setTimeout(r, 500));
// About 1,000 tokens: it fits the KV alone, not beside the holder.
const waiter = await stream("waiter", text(1000), 16);
const held = await holder;
await router.close();

const s = (ms: number | null) => (ms === null ? "-" : `${(ms / 1000).toFixed(3)} s`);
const keepalives = waiter.comments.filter(([, line]) => line.startsWith(": maitred held"));
const gaps = keepalives.slice(1).map(([at], i) => at - keepalives[i][0]);
console.log(`hold keep-alive: ${args["hold-keepalive"]}`);
console.log(
  `holder: ${held.events} events in ${s(held.endMs)}, ${held.done ? "ended with [DONE]" : "cut"}`,
);
for (const t of [held, waiter]) if (t.other !== "") console.log(`  unexpected: ${t.other}`);
console.log(
  `waiter: head after ${s(waiter.headMs)} (status ${waiter.status}, x-maitred-held ${waiter.held ?? "absent"})`,
);
console.log(`  keep-alive comments: ${keepalives.length}`);
for (const [at, line] of waiter.comments) console.log(`    ${s(at).padStart(9)}  ${line}`);
if (gaps.length > 0)
  console.log(
    `  gaps between keep-alives: ${gaps.map((g) => s(g)).join(", ")} (min ${s(Math.min(...gaps))}, max ${s(Math.max(...gaps))})`,
  );
console.log(`  first event after ${s(waiter.firstEventMs)}; ${waiter.events} events`);
console.log(
  `  ${waiter.done ? "completed: ended with data: [DONE]" : "NOT completed"} after ${s(waiter.endMs)}`,
);
