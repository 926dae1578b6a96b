/**
 * The tr scheduler's scorecard on `maitred simulate`: the same runs, ratios and tail figures
 * for every setting, printed as markdown. Default setting: the mini-swe-agent DeepSeek trace,
 * 2 × llama-3.1-8b-h100 with 26,000 KV blocks each, seed 7, 10 min warm-up + 50 min window.
 *
 * Rows: tr ÷ default and tr ÷ oracle steps/min at 128 programs, step latency p99 of the three,
 * the longest time one step was held paused (tr), tr ÷ default at 16 programs, and tr ÷
 * default with every tool time × each `--tool-scales` value. Runs go two at a time in child
 * processes (one simulated hour of 128 programs takes 5–15 s of wall time each).
 *
 *   node_modules/.bin/node scripts/bench-tr.ts [--seeds 7,1] [--workload deepseek]
 *     [--backends 2] [--num-gpu-blocks 26000] [--tool-scales 1,5,20,50,100]
 *     [--concurrency 128,16] [--priority] [--quick] [--json out.json]
 *   node_modules/.bin/node scripts/bench-tr.ts --preset all   (deepseek, gemini, claude-code,
 *     a chat + agents mix with classes, and 1 and 4 backends)
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runSimulation, type SimRouter } from "../src/simulate/run-simulation.ts";
import { resolveSimulateFlags } from "../src/simulate/simulate-options.ts";
import { loadWorkload } from "../src/workload/load-workload.ts";

interface RunSpec {
  router: SimRouter;
  concurrency: number;
  seed: number;
  toolScale: number;
  workload: string;
  backends: number;
  blocks: string;
  priority: boolean;
  quick: boolean;
}

interface RunResult {
  spec: RunSpec;
  stepsPerMin: number;
  p99S: number;
  maxPauseS: number;
  hit: number | null;
  wallS: number;
}

const { values: args } = parseArgs({
  options: {
    one: { type: "string" },
    seeds: { type: "string", default: "7" },
    workload: { type: "string", default: "deepseek" },
    backends: { type: "string", default: "2" },
    "num-gpu-blocks": { type: "string", default: "26000" },
    "tool-scales": { type: "string", default: "1,5,20,50,100" },
    concurrency: { type: "string", default: "128,16" },
    priority: { type: "boolean", default: false },
    quick: { type: "boolean", default: false },
    preset: { type: "string" },
    json: { type: "string" },
  },
});

/** One run, in this process (the child's side of `--one`). */
async function runOne(spec: RunSpec): Promise<RunResult> {
  const o = resolveSimulateFlags({
    workload: spec.workload,
    numBackends: String(spec.backends),
    numGpuBlocks: spec.blocks,
    seed: String(spec.seed),
    toolTimeScale: String(spec.toolScale),
    warmup: spec.quick ? "2m" : "10m",
    duration: spec.quick ? "8m" : "50m",
    ...(spec.priority ? { priority: true } : {}),
  });
  const workload = await loadWorkload(o.workload);
  const t0 = performance.now();
  const { report } = runSimulation({
    router: spec.router,
    concurrency: spec.concurrency,
    workload,
    numBackends: o.numBackends,
    profile: o.profile,
    numGpuBlocks: o.numGpuBlocks,
    warmupMs: o.warmupMs,
    durationMs: o.durationMs,
    schedulerIntervalMs: o.schedulerIntervalMs,
    knobs: o.knobs,
    engineSeed: o.seed,
  });
  return {
    spec,
    stepsPerMin: report.steps_per_min,
    p99S: (report.step_latency_ms.p99 ?? 0) / 1000,
    maxPauseS: (report.paused_ms.per_step_max ?? 0) / 1000,
    hit: report.prompt_tokens.cache_hit_rate,
    wallS: (performance.now() - t0) / 1000,
  };
}

if (args.one !== undefined) {
  process.stdout.write(JSON.stringify(await runOne(JSON.parse(args.one) as RunSpec)));
  process.exit(0);
}

const self = fileURLToPath(import.meta.url);
function runChild(spec: RunSpec): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [self, "--one", JSON.stringify(spec)],
      { maxBuffer: 1 << 24 },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout) as RunResult)),
    );
  });
}

async function runAll(specs: RunSpec[], parallel = 2): Promise<RunResult[]> {
  const out: RunResult[] = new Array(specs.length);
  let next = 0;
  const worker = async () => {
    while (next < specs.length) {
      const i = next++;
      out[i] = await runChild(specs[i]);
      const r = out[i];
      const s = r.spec;
      process.stderr.write(
        `  ${s.workload} ${s.backends}b seed ${s.seed} ${s.router} C=${s.concurrency} tool×${s.toolScale}: ${r.stepsPerMin.toFixed(1)} steps/min (${r.wallS.toFixed(1)} s wall)\n`,
      );
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return out;
}

const list = (raw: string) => raw.split(",").map(Number);

interface Setting {
  label: string;
  workload: string;
  backends: number;
  priority: boolean;
}

function settings(): Setting[] {
  const base = { backends: Number(args.backends), priority: args.priority };
  if (args.preset !== "all") return [{ label: args.workload, workload: args.workload, ...base }];
  return [
    { label: "deepseek", workload: "deepseek", backends: 2, priority: false },
    { label: "gemini", workload: "gemini", backends: 2, priority: false },
    { label: "claude-code", workload: "claude-code", backends: 2, priority: false },
    {
      label: "chat@interactive 0.2 + deepseek@bulk 0.8, priorities on",
      workload: "mix:chat@interactive=0.2,deepseek@bulk=0.8",
      backends: 2,
      priority: true,
    },
    { label: "deepseek, 1 backend", workload: "deepseek", backends: 1, priority: false },
    { label: "deepseek, 4 backends", workload: "deepseek", backends: 4, priority: false },
  ];
}

const seeds = list(args.seeds);
const [bigC, smallC] = list(args.concurrency);
const scales = list(args["tool-scales"]).filter((x) => x !== 1);
const all: RunResult[] = [];
const fmt = (v: number, d = 2) => v.toFixed(d);

for (const st of settings()) {
  const specs: RunSpec[] = [];
  const spec = (router: SimRouter, concurrency: number, seed: number, toolScale = 1): RunSpec => ({
    router,
    concurrency,
    seed,
    toolScale,
    workload: st.workload,
    backends: st.backends,
    blocks: args["num-gpu-blocks"],
    // Priorities are a tr setting; default and the oracle ignore them.
    priority: st.priority && router === "tr",
    quick: args.quick,
  });
  for (const seed of seeds) {
    specs.push(spec("default", bigC, seed), spec("tr", bigC, seed), spec("oracle", bigC, seed));
    if (smallC !== undefined) specs.push(spec("default", smallC, seed), spec("tr", smallC, seed));
    for (const ts of scales)
      specs.push(spec("default", bigC, seed, ts), spec("tr", bigC, seed, ts));
  }
  console.error(`# ${st.label}: ${specs.length} runs`);
  const results = await runAll(specs);
  all.push(...results);
  const find = (router: SimRouter, c: number, seed: number, ts = 1) =>
    results.find(
      (r) =>
        r.spec.router === router &&
        r.spec.concurrency === c &&
        r.spec.seed === seed &&
        r.spec.toolScale === ts,
    ) as RunResult;
  const cols = seeds.map((s) => `seed ${s}`);
  console.log(
    `\n### ${st.label} (${st.backends} × llama-3.1-8b-h100, ${args["num-gpu-blocks"]} blocks)\n`,
  );
  console.log(`| measure | ${cols.join(" | ")} |`);
  console.log(`| --- | ${cols.map(() => "---:").join(" | ")} |`);
  const row = (label: string, f: (seed: number) => string) =>
    console.log(`| ${label} | ${seeds.map(f).join(" | ")} |`);
  row(`tr ÷ default steps/min, ${bigC} programs`, (s) =>
    fmt(find("tr", bigC, s).stepsPerMin / find("default", bigC, s).stepsPerMin),
  );
  row(`tr ÷ oracle steps/min, ${bigC} programs`, (s) =>
    fmt(find("tr", bigC, s).stepsPerMin / find("oracle", bigC, s).stepsPerMin),
  );
  row(`steps/min tr / default / oracle`, (s) =>
    [find("tr", bigC, s), find("default", bigC, s), find("oracle", bigC, s)]
      .map((r) => fmt(r.stepsPerMin, 1))
      .join(" / "),
  );
  row(`step latency p99 (s) tr / default / oracle`, (s) =>
    [find("tr", bigC, s), find("default", bigC, s), find("oracle", bigC, s)]
      .map((r) => fmt(r.p99S, 0))
      .join(" / "),
  );
  row(`tr longest pause of one step (s)`, (s) => fmt(find("tr", bigC, s).maxPauseS, 0));
  if (smallC !== undefined) {
    row(`tr ÷ default, ${smallC} programs`, (s) =>
      fmt(find("tr", smallC, s).stepsPerMin / find("default", smallC, s).stepsPerMin, 3),
    );
  }
  for (const ts of scales) {
    row(`tool time × ${ts}: tr ÷ default (tr steps/min)`, (s) => {
      const tr = find("tr", bigC, s, ts);
      return `${fmt(tr.stepsPerMin / find("default", bigC, s, ts).stepsPerMin)} (${fmt(tr.stepsPerMin, 1)})`;
    });
  }
}
if (args.json !== undefined)
  writeFileSync(args.json, `${JSON.stringify({ runs: all }, null, 2)}\n`);
