/**
 * `npm run bench:held-stream`: a held stream on the wall clock. `maitred serve --router tr` in
 * front of one simulated vLLM backend whose KV holds one program. A first program (`holder`)
 * streams a long answer that fills it; a second (`waiter`) sends a streaming request while it
 * runs, which the router holds until the holder's turn has ended and the next tick finds the
 * engine idle. Measured at the waiter's client: the time from its request to the response head,
 * the comments that come while it is held and the gaps between them (one every 15 s), when its
 * first event came, and that the stream ran to `data: [DONE]`.
 */
import { request } from "node:http";
import { resolveRouterConfig } from "../../config/load-config.ts";
import { ROUTER_SETTINGS } from "../../config/router-config.ts";
import { settingOf } from "../../config/setting.ts";
import { integer } from "../../config/values.ts";
import { startRouter } from "../../service/service.ts";
import type { ScriptSpec } from "../script-args.ts";
import { timeScaleFlag } from "../script-flags.ts";

export const HELD_STREAM_SPEC = {
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

const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
/** 150 blocks of 16 tokens: the holder's prompt and answer fill it, so the waiter waits. */
const BLOCKS = 150;
const HOLDER_PROMPT_TOKENS = 2000;
/** About 1,000 tokens: the waiter fits the KV alone, not beside the holder. */
const WAITER_PROMPT_TOKENS = 1000;
const WAITER_MAX_TOKENS = 16;
/** Wall time that puts the holder on the engine before the waiter arrives. */
const WAITER_DELAY_MS = 500;

/**
 * `tokens` tokens of text: four-letter words are one token each to the simulated tokenizer and
 * five characters each, the ratio the router estimates a prompt by before any usage, so its
 * books see the holder fill the KV from its first request.
 */
const WORDS = ["time", "work", "data", "step", "tool", "call", "file", "line"];
export const promptOfTokens = (tokens: number) =>
  Array.from({ length: tokens }, (_, i) => WORDS[i % WORDS.length]).join(" ");

/** One streamed answer as its client saw it; times are ms from the request. */
export interface Timeline {
  /** ms from the request to the response head. */
  headMs: number | null;
  status: number | null;
  /** The `x-maitred-held` header, when the router sent one. */
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

export const emptyTimeline = (): Timeline => ({
  headMs: null,
  status: null,
  held: null,
  comments: [],
  firstEventMs: null,
  events: 0,
  done: false,
  endMs: null,
  other: "",
});

/**
 * A reader of the answer's body into `t`, piece by piece as it arrives: a line split across
 * pieces is read once whole, each timed by `since()` when its end arrives.
 */
export function timelineReader(t: Timeline, since: () => number): (piece: string) => void {
  let carry = "";
  return (piece) => {
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
  };
}

/** A streaming chat completion to `url`, each piece of its answer timed on the wall clock. */
export function streamTimeline(
  url: string,
  programId: string,
  prompt: string,
  maxTokens: number,
): Promise<Timeline> {
  const t = emptyTimeline();
  const t0 = performance.now();
  const since = () => Math.round(performance.now() - t0);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/chat/completions`,
      { method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        t.headMs = since();
        t.status = res.statusCode ?? null;
        t.held = (res.headers["x-maitred-held"] as string | undefined) ?? null;
        res.setEncoding("utf8");
        res.on("data", timelineReader(t, since));
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

export interface HeldStreamOptions {
  holderTokens: number;
  timeScale: number;
  /** The router's --hold-keepalive, as the flag reads. */
  holdKeepalive: string;
  progress?: (line: string) => void;
}

/** The holder's and the waiter's streams through one router over one small backend. */
export async function runHeldStream(
  o: HeldStreamOptions,
): Promise<{ holder: Timeline; waiter: Timeline }> {
  const config = resolveRouterConfig({
    flags: { backends: "sim:1", port: "0", "log-level": "warn", "hold-keepalive": o.holdKeepalive },
    env: {},
  });
  config.sim = { numGpuBlocks: BLOCKS, timeScale: o.timeScale };
  const router = await startRouter(config);
  try {
    o.progress?.("holder streaming; the waiter follows and is held until the holder's turn ends");
    const prompt = promptOfTokens(HOLDER_PROMPT_TOKENS);
    const holding = streamTimeline(router.url, "holder", prompt, o.holderTokens);
    await new Promise((r) => setTimeout(r, WAITER_DELAY_MS));
    const waiter = await streamTimeline(
      router.url,
      "waiter",
      promptOfTokens(WAITER_PROMPT_TOKENS),
      WAITER_MAX_TOKENS,
    );
    return { holder: await holding, waiter };
  } finally {
    await router.close();
  }
}

const seconds = (ms: number | null) => (ms === null ? "-" : `${(ms / 1000).toFixed(3)} s`);

/** What the script prints: the holder in a line, the waiter's head, comments, gaps and end. */
export function heldStreamLines(holdKeepalive: string, holder: Timeline, waiter: Timeline) {
  const s = seconds;
  const keepalives = waiter.comments.filter(([, line]) => line.startsWith(": maitred held"));
  const gaps = keepalives.slice(1).map(([at], i) => at - keepalives[i][0]);
  const lines = [
    `hold keep-alive: ${holdKeepalive}`,
    `holder: ${holder.events} events in ${s(holder.endMs)}, ${holder.done ? "ended with [DONE]" : "cut"}`,
  ];
  for (const t of [holder, waiter]) if (t.other !== "") lines.push(`  unexpected: ${t.other}`);
  lines.push(
    `waiter: head after ${s(waiter.headMs)} (status ${waiter.status}, x-maitred-held ${waiter.held ?? "absent"})`,
    `  keep-alive comments: ${keepalives.length}`,
  );
  for (const [at, line] of waiter.comments) lines.push(`    ${s(at).padStart(9)}  ${line}`);
  if (gaps.length > 0)
    lines.push(
      `  gaps between keep-alives: ${gaps.map((g) => s(g)).join(", ")} (min ${s(Math.min(...gaps))}, max ${s(Math.max(...gaps))})`,
    );
  lines.push(
    `  first event after ${s(waiter.firstEventMs)}; ${waiter.events} events`,
    `  ${waiter.done ? "completed: ended with data: [DONE]" : "NOT completed"} after ${s(waiter.endMs)}`,
  );
  return lines;
}
