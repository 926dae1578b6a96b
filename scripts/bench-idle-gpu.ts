/**
 * The small-backend case, over HTTP: `maitred serve --router tr` in front of one simulated
 * vLLM backend with 2,400 tokens of KV (150 blocks of 16), five agents of three steps each.
 * Agent `a` runs first and is never released once its steps are done; then `b`…`e` start
 * together and release themselves at their end. Each step adds about 600 tokens, so with the
 * learned headroom no two agents fit together: the done agent that holds its room must not
 * keep the others parked while the engine sits idle (before, they waited for the 900 s
 * ageing bound).
 *
 * Engines, tools and the router's clocks run at `--time-scale` (default 5). Prints, per
 * step, the wall time it took and how long the router held it, then the total time of all
 * steps in engine seconds (wall × scale) and in scheduler ticks.
 *
 *   node_modules/.bin/node scripts/bench-idle-gpu.ts [--time-scale 5] [--lend-after 1]
 */
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { timeScaleFlag } from "../src/bench/script-flags.ts";
import { scaleRouterTimes } from "../src/bench/start-router-for.ts";
import { resolveRouterConfig } from "../src/config/load-config.ts";
import { ROUTER_SETTINGS } from "../src/config/router-config.ts";
import { settingOf } from "../src/config/setting.ts";
import { startRouter } from "../src/service/service.ts";

const SPEC = {
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
const { values: args } = scriptArgs(SPEC);
const scale = Number(args["time-scale"]);
const AGENTS = ["a", "b", "c", "d", "e"];
const STEPS = 3;
const TOOL_MS = 1000; // engine time

const flags: Record<string, string> = {
  backends: "sim:1",
  port: "0",
  "log-level": "warn",
};
if (args["lend-after"] !== undefined) flags["lend-after"] = args["lend-after"];
const config = scaleRouterTimes(resolveRouterConfig({ flags, env: {} }), scale);
config.sim = { numGpuBlocks: 150, timeScale: scale };
const router = await startRouter(config);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Roughly `tokens` tokens of text for the simulated tokenizer. */
const text = (tokens: number) => Array.from({ length: tokens }, (_, i) => `w${i % 97}`).join(" ");

interface StepResult {
  agent: string;
  step: number;
  wallMs: number;
  pausedMs: number;
  status: number;
}

async function agent(name: string): Promise<StepResult[]> {
  const messages: { role: string; content: string }[] = [{ role: "user", content: text(200) }];
  const out: StepResult[] = [];
  for (let step = 0; step < STEPS; step++) {
    const t0 = performance.now();
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "meta-llama/Llama-3.1-8B-Instruct",
        program_id: name,
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
    if (body.error) console.error(`${name} step ${step}: ${body.error.message}`);
    else if (process.env.DEBUG)
      console.error(`${name} step ${step}: prompt ${body.usage?.prompt_tokens}`);
    out.push({
      agent: name,
      step,
      wallMs: performance.now() - t0,
      pausedMs: Number(res.headers.get("x-maitred-paused-ms") ?? 0),
      status: res.status,
    });
    messages.push({ role: "assistant", content: body.choices?.[0]?.message.content ?? "" });
    messages.push({ role: "user", content: text(200) }); // the tool's output
    await sleep(TOOL_MS / scale);
  }
  if (name !== "a") {
    await fetch(`${router.url}/programs/release`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ program_id: name }),
    });
  }
  return out;
}

const t0 = performance.now();
try {
  progress(`agent a: ${STEPS} steps alone`);
  const first = await agent("a");
  progress(`agents ${AGENTS.slice(1).join(", ")} together, beside a (never released)`);
  const results = [...first, ...(await Promise.all(AGENTS.slice(1).map(agent))).flat()];
  const wallS = (performance.now() - t0) / 1000;
  for (const r of results) {
    console.log(
      `${r.agent} step ${r.step}: ${r.status}, ${(r.wallMs / 1000).toFixed(2)} s wall, held ${r.pausedMs} ms`,
    );
  }
  const tickS = config.schedulerIntervalMs / 1000;
  console.log(
    `all ${results.length} steps done in ${wallS.toFixed(1)} s wall = ${(wallS * scale).toFixed(0)} engine s = ${(wallS / tickS).toFixed(1)} ticks of ${tickS} s; longest hold ${Math.max(...results.map((r) => r.pausedMs))} ms`,
  );
  const snap = router.loop.scheduler.snapshot();
  console.log(
    `router: ${snap.counters.pauses} pauses, ${snap.counters.resumes} resumes; agent a (never released) is ${snap.programs.find((p) => p.id === "a")?.state ?? "gone"}`,
  );
} finally {
  await router.close();
}
