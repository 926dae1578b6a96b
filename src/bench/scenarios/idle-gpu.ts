/**
 * `npm run bench:idle-gpu`: the small-backend case, over HTTP. `maitred serve --router tr` in
 * front of one simulated vLLM backend with 2,400 tokens of KV (150 blocks of 16), five agents of
 * three steps each. Agent `a` runs first and is never released once its steps are done; then
 * `b`…`e` start together and release themselves at their end. Each step adds about 600 tokens,
 * so with the learned headroom no two agents fit together: the done agent that holds its room
 * must not keep the others parked while the engine sits idle (before, they waited for the 900 s
 * ageing bound). Engines, tools and the router's clocks run at one time scale.
 */
import { resolveRouterConfig } from "../../config/load-config.ts";
import { ROUTER_SETTINGS } from "../../config/router-config.ts";
import { settingOf } from "../../config/setting.ts";
import { startRouter } from "../../service/service.ts";
import type { ScriptSpec } from "../script-args.ts";
import { timeScaleFlag } from "../script-flags.ts";
import { scaleRouterTimes } from "../start-router-for.ts";

export const IDLE_GPU_SPEC = {
  name: "bench:idle-gpu",
  summary:
    "The small-backend case over HTTP: five agents on one backend that fits one; per step its wall time and how long the router held it, and the total in scheduler ticks.",
  runtime:
    "under a minute (timed: 38 s on a busy shared core; the recorded run's steps took 2.6 scheduler ticks of 1 s)",
  flags: {
    "time-scale": timeScaleFlag("5", "engines, tools and the router's clocks run S times faster"),
    "lend-after": {
      arg: "<x>",
      defaultText: "maitred serve's",
      description:
        "the router's --lend-after (tool-time multiples before lending a program's room)",
      check: settingOf(ROUTER_SETTINGS, "lend-after", "maitred serve").schema,
    },
  },
} satisfies ScriptSpec;

const AGENTS = ["a", "b", "c", "d", "e"];
const STEPS = 3;
/** Tool time between steps, in engine time. */
const TOOL_MS = 1000;
/** 150 blocks of 16 tokens: one agent's conversation fits, two do not. */
const BLOCKS = 150;
const MODEL = "meta-llama/Llama-3.1-8B-Instruct";

/** Roughly `tokens` tokens of text for the simulated tokenizer. */
export const textOfTokens = (tokens: number) =>
  Array.from({ length: tokens }, (_, i) => `w${i % 97}`).join(" ");

export interface StepResult {
  agent: string;
  step: number;
  wallMs: number;
  /** How long the router held the step (`x-maitred-paused-ms`). */
  pausedMs: number;
  status: number;
}

export interface AgentOptions {
  /** The router's base URL. */
  url: string;
  name: string;
  steps: number;
  /** Release the program at its end (agent `a` never is). */
  release: boolean;
  /** The tool time between steps. */
  toolWait: () => Promise<void>;
  /** Where a step's error (and, with DEBUG set, each prompt's size) is said. */
  log: (line: string) => void;
}

/** One agent: `steps` chat turns, each adding ~200 tokens of tool output, then its release. */
export async function runAgent(o: AgentOptions): Promise<StepResult[]> {
  const messages = [{ role: "user", content: textOfTokens(200) }];
  const out: StepResult[] = [];
  for (let step = 0; step < o.steps; step++) {
    const t0 = performance.now();
    const res = await fetch(`${o.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        program_id: o.name,
        messages,
        max_tokens: 50,
        ignore_eos: true,
      }),
    });
    const body = (await res.json()) as {
      choices?: { message: { content: string } }[];
      usage?: { prompt_tokens: number };
      error?: { message: string };
    };
    if (body.error) o.log(`${o.name} step ${step}: ${body.error.message}`);
    else if (process.env.DEBUG)
      o.log(`${o.name} step ${step}: prompt ${body.usage?.prompt_tokens}`);
    out.push({
      agent: o.name,
      step,
      wallMs: performance.now() - t0,
      pausedMs: Number(res.headers.get("x-maitred-paused-ms") ?? 0),
      status: res.status,
    });
    messages.push({ role: "assistant", content: body.choices?.[0]?.message.content ?? "" });
    messages.push({ role: "user", content: textOfTokens(200) }); // the tool's output
    await o.toolWait();
  }
  if (o.release) {
    await fetch(`${o.url}/programs/release`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ program_id: o.name }),
    });
  }
  return out;
}

export interface IdleGpuResult {
  steps: StepResult[];
  wallS: number;
  scale: number;
  /** The router's scheduler interval, scaled, in seconds. */
  tickS: number;
  pauses: number;
  resumes: number;
  /** Agent `a`'s state in the router at the end (it is never released). */
  stateOfA: string;
}

/** Agent `a` alone, then `b`…`e` together beside it, through one router over one small backend. */
export async function runIdleGpu(o: {
  scale: number;
  lendAfter?: string;
  progress?: (line: string) => void;
  log?: (line: string) => void;
}): Promise<IdleGpuResult> {
  const flags: Record<string, string> = { backends: "sim:1", port: "0", "log-level": "warn" };
  if (o.lendAfter !== undefined) flags["lend-after"] = o.lendAfter;
  const config = scaleRouterTimes(resolveRouterConfig({ flags, env: {} }), o.scale);
  config.sim = { numGpuBlocks: BLOCKS, timeScale: o.scale };
  const router = await startRouter(config);
  const agent = (name: string) =>
    runAgent({
      url: router.url,
      name,
      steps: STEPS,
      release: name !== "a",
      toolWait: () => new Promise((r) => setTimeout(r, TOOL_MS / o.scale)),
      log: o.log ?? ((line) => console.error(line)),
    });
  const t0 = performance.now();
  try {
    o.progress?.(`agent a: ${STEPS} steps alone`);
    const first = await agent("a");
    o.progress?.(`agents ${AGENTS.slice(1).join(", ")} together, beside a (never released)`);
    const steps = [...first, ...(await Promise.all(AGENTS.slice(1).map(agent))).flat()];
    const wallS = (performance.now() - t0) / 1000;
    const snap = router.loop.scheduler.snapshot();
    return {
      steps,
      wallS,
      scale: o.scale,
      tickS: config.schedulerIntervalMs / 1000,
      pauses: snap.counters.pauses,
      resumes: snap.counters.resumes,
      stateOfA: snap.programs.find((p) => p.id === "a")?.state ?? "gone",
    };
  } finally {
    await router.close();
  }
}

/** What the script prints: a line per step, the total in engine seconds and ticks, the router's. */
export function idleGpuLines(r: IdleGpuResult): string[] {
  const { wallS, scale, tickS } = r;
  return [
    ...r.steps.map(
      (s) =>
        `${s.agent} step ${s.step}: ${s.status}, ${(s.wallMs / 1000).toFixed(2)} s wall, held ${s.pausedMs} ms`,
    ),
    `all ${r.steps.length} steps done in ${wallS.toFixed(1)} s wall = ${(wallS * scale).toFixed(0)} engine s = ${(wallS / tickS).toFixed(1)} ticks of ${tickS} s; longest hold ${Math.max(...r.steps.map((s) => s.pausedMs))} ms`,
    `router: ${r.pauses} pauses, ${r.resumes} resumes; agent a (never released) is ${r.stateOfA}`,
  ];
}
