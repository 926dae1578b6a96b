import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TrResult, TrRunSpec } from "../../../src/bench/sims/tr-report.ts";
import {
  settingRuns,
  TR_RUNS,
  TR_SPEC,
  trPlan,
  trRunSpec,
  trScorecard,
  trSettings,
} from "../../../src/bench/sims/tr-scorecard.ts";
import { argsOf, testIo } from "./helpers.ts";

const args = (...argv: string[]) => argsOf(TR_SPEC, argv);

/** Made-up runs: default 100, tr 150, the oracle 200 steps/min; seed 1 doubles every figure. */
const made = (spec: TrRunSpec): TrResult => {
  const base = { default: 100, tr: 150, oracle: 200 }[spec.router];
  const k = spec.seed === 1 ? 2 : 1;
  return {
    spec,
    stepsPerMin: base * k,
    p99S: (spec.router === "tr" ? 40 : 20) * k,
    stepPauseMaxS: 30,
    stillParkedMaxS: spec.seed === 1 ? 90 : 0,
    hit: 0.9,
    wallS: 1,
  };
};

describe("bench:tr's runs", () => {
  it("the flags make one setting; --preset all makes six, the mix with priorities on", () => {
    const one = trSettings(args("--workload", "gemini", "--backends", "3"));
    assert.deepEqual(one, [{ label: "gemini", workload: "gemini", backends: 3, priority: false }]);
    const all = trSettings(args("--preset", "all"));
    assert.equal(all.length, 6);
    assert.deepEqual(
      all.filter((s) => s.priority).map((s) => s.workload),
      ["mix:chat@interactive=0.2,deepseek@bulk=0.8"],
    );
  });

  it("a run's window: given flags, then --quick, then the setting's own, then the hour", () => {
    const claude = trSettings(args("--preset", "all"))[2];
    const window = (a: ReturnType<typeof args>) => {
      const s = trRunSpec(a, claude, "tr", 128, 7);
      return `${s.warmup}+${s.duration}`;
    };
    assert.equal(window(args()), "2h+10h");
    assert.equal(window(args("--quick")), "2m+8m");
    assert.equal(window(args("--quick", "--warmup", "5m")), "5m+8m");
    const deepseek = trSettings(args())[0];
    const hour = trRunSpec(args(), deepseek, "default", 128, 7);
    assert.equal(`${hour.warmup}+${hour.duration}`, "10m+50m");
  });

  it("priorities are tr's only, and every seed runs three routers, the second level and the scales", () => {
    const a = args("--priority", "--seeds", "7,1", "--tool-scales", "1,5");
    const st = trSettings(a)[0];
    const runs = settingRuns(a, st, trPlan(a));
    // Per seed: 3 routers at 128, 2 at 16, default and tr at × 5 and × 50.
    assert.equal(runs.length, 2 * (3 + 2 + 2 * 2));
    assert.ok(runs.every((r) => r.priority === (r.router === "tr")));
    assert.deepEqual(
      [...new Set(runs.map((r) => r.toolScale))].sort((x, y) => x - y),
      [1, 5, 50],
    );
  });

  it("one concurrency drops the second level's rows", () => {
    const a = args("--concurrency", "64", "--tool-scales", "50");
    const plan = trPlan(a);
    assert.equal(plan.smallC, undefined);
    assert.deepEqual(plan.scaled, [50]);
    assert.equal(settingRuns(a, trSettings(a)[0], plan).length, 3 + 2);
  });

  it("a tiny run in this process gives its figures and its line", async () => {
    const spec: TrRunSpec = {
      router: "tr",
      concurrency: 4,
      seed: 7,
      toolScale: 1,
      workload: "chat",
      backends: 2,
      blocks: "2000",
      priority: false,
      warmup: "0s",
      duration: "20s",
    };
    const r = await TR_RUNS.runOne(spec);
    assert.deepEqual(r.spec, spec);
    assert.ok(r.stepsPerMin > 0, "a chat session answers in 20 s");
    assert.ok(r.p99S >= 0 && r.stepPauseMaxS >= 0 && r.stillParkedMaxS >= 0);
    assert.match(TR_RUNS.describe(r), /^chat 2b seed 7 tr C=4 tool×1: [\d.]+ steps\/min \(/);
  });
});

describe("bench:tr's scorecard", () => {
  it("one setting: a column per seed and their mean, ratios per seed, no summary", async () => {
    const t = testIo(made);
    await trScorecard(args("--seeds", "7,1", "--tool-scales", "1", "--jobs", "2"), t.io);
    const out = t.stdout();
    assert.match(
      out,
      /^\n### deepseek: 2 × llama-3\.1-8b-h100, 26000 KV blocks per engine, 10 min warm-up \+ 50 min window\n\n\| measure \| seed 7 \| seed 1 \| mean \|/,
    );
    assert.ok(out.includes("| tr ÷ default steps/min, 128 programs | 1.50 | 1.50 | 1.50 |"));
    assert.ok(out.includes("| tr ÷ oracle steps/min, 128 programs | 0.75 | 0.75 | 0.75 |"));
    assert.ok(
      out.includes(
        "| steps/min tr / default / oracle, 128 programs | 150.0 / 100.0 / 200.0 | 300.0 / 200.0 / 400.0 | 225.0 / 150.0 / 300.0 |",
      ),
    );
    assert.ok(
      out.includes("| tr longest pause of one step (s), 128 programs | 30 | 90 | 60 |"),
      "the longest pause counts a request still parked at the end",
    );
    assert.ok(out.includes("| tr ÷ default steps/min, 16 programs | 1.500 | 1.500 | 1.500 |"));
    assert.ok(
      out.includes(
        "| tool time × 1: steps/min tr / default (tr ÷ default) | 150.0 / 100.0 (1.50) | 300.0 / 200.0 (1.50) | 225.0 / 150.0 (1.50) |",
      ),
    );
    assert.ok(!out.includes("Summary"));
    assert.equal(t.noted[0], "# deepseek: 14 runs, 2 at a time\n");
    assert.match(t.noted.at(-1) ?? "", /^# 14 runs: 14 s of run wall time, /);
  });

  it("--preset all: a table per setting, then the summary of the six", async () => {
    const t = testIo(made);
    const runs = await trScorecard(
      args("--preset", "all", "--tool-scales", "1", "--jobs", "1"),
      t.io,
    );
    assert.equal(t.ran.length, 6, "each setting's runs go to the pool together");
    assert.equal(runs.length, 6 * 7);
    const out = t.stdout();
    assert.equal(out.match(/^### /gm)?.length, 7);
    assert.ok(out.includes("### claude-code preset: 2 × llama-3.1-8b-h100"));
    assert.ok(out.includes(", 2 h warm-up + 10 h window\n"));
    assert.ok(out.includes(", priorities on for tr\n"));
    assert.ok(
      out.includes("### Summary (seed 7; ratios are steps/min at 128 programs unless stated)"),
    );
    assert.ok(
      out.includes(
        "| DeepSeek, 4 backends (10 min warm-up + 50 min window) | 1.50 | 0.75 | 40 | 30 | 1.500 | 1.50 |",
      ),
    );
    assert.equal(t.noted[0], "# DeepSeek trace: 7 runs, 1 at a time\n");
  });
});
