import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TailResult, TailRunSpec } from "../../../src/bench/sims/tail-report.ts";
import {
  digestOf,
  TAIL_RUNS,
  TAIL_SPEC,
  tailRunSpec,
  tailRuns,
  tailScorecard,
} from "../../../src/bench/sims/tail-scorecard.ts";
import type { SimulateRunReport } from "../../../src/simulate/simulate-report.ts";
import { argsOf, testIo } from "./helpers.ts";

const args = (...argv: string[]) => argsOf(TAIL_SPEC, argv);

const flagsOf = (s: TailRunSpec) => s.flags.map(([k, v]) => `--${k} ${v}`).join(" ");

/** Made-up runs: default 100 steps/min, every preset 150; the by-hand run is the throughput one. */
function made(spec: TailRunSpec): TailResult {
  const tr = spec.row !== "default";
  const bounds = spec.row === "by-hand" || spec.row === "throughput" ? [0, 1800] : [240, 300];
  return {
    spec,
    command: `maitred simulate ${flagsOf(spec)}`,
    stepsPerMin: tr ? 150 * (spec.seed === 1 ? 2 : 1) : 100 * (spec.seed === 1 ? 2 : 1),
    stepS: { p50: 1, p95: 2, p99: tr ? 30 : null },
    stepPauseMaxS: tr ? 120 : 0,
    stillParkedMaxS: spec.seed === 1 && tr ? 400 : 0,
    completionS: { p50: 100, p99: 900, count: 10, unfinished: 1 },
    hit: 0.5,
    prefilled: 2_000_000,
    scheduler: {} as TailResult["scheduler"],
    ageingS: bounds[0],
    maxPauseS: bounds[1],
    digest: spec.row === "by-hand" || spec.row === "throughput" ? "same" : spec.row,
    wallS: 1,
  };
}

describe("bench:tail's runs", () => {
  it("a row's router and bounds come first, then the workload, the cluster, seed and window", () => {
    assert.equal(
      flagsOf(tailRunSpec(false, "deepseek", 7, "default")),
      "--router default --workload deepseek --num-backends 2 --profile llama-3.1-8b-h100 --num-gpu-blocks 26000 --concurrency 128 --seed 7 --warmup 10m --duration 50m",
    );
    assert.match(
      flagsOf(tailRunSpec(false, "gemini", 1, "balanced")),
      /^--router tr --tail balanced --workload gemini /,
    );
    assert.match(
      flagsOf(tailRunSpec(false, "claude-code", 1, "by-hand")),
      /^--router tr --ageing 0 --max-pause 1800 .* --warmup 2h --duration 10h$/,
    );
    assert.match(
      flagsOf(tailRunSpec(true, "claude-code", 1, "bounded")),
      /--warmup 2m --duration 8m$/,
    );
  });

  it("every workload and seed runs the reference and each preset, DeepSeek the by-hand bounds too, claude-code first", () => {
    const specs = tailRuns(args("--seeds", "7,1"));
    assert.equal(specs.length, 3 * 2 * 4 + 2);
    assert.ok(specs.slice(0, 8).every((s) => s.workload === "claude-code"));
    assert.deepEqual(
      specs.filter((s) => s.row === "by-hand").map((s) => `${s.workload} ${s.seed}`),
      ["deepseek 7", "deepseek 1"],
    );
  });

  it("the digest ignores the settings a report echoes and nothing else", () => {
    const report = (ageingMs: number, steps: number) =>
      ({
        steps_per_min: steps,
        simulated: { profile: "p", scheduler_config: { ageingMs } },
      }) as unknown as SimulateRunReport;
    assert.equal(digestOf(report(0, 10)), digestOf(report(240_000, 10)));
    assert.notEqual(digestOf(report(0, 10)), digestOf(report(0, 11)));
  });

  it("a tiny run in this process states the bounds the core ran with", async () => {
    const spec: TailRunSpec = {
      workload: "deepseek",
      seed: 7,
      row: "throughput",
      flags: [
        ["router", "tr"],
        ["tail", "throughput"],
        ["workload", "chat"],
        ["num-gpu-blocks", "2000"],
        ["concurrency", "4"],
        ["seed", "7"],
        ["warmup", "0s"],
        ["duration", "20s"],
      ],
    };
    const r = await TAIL_RUNS.runOne(spec);
    assert.equal(r.ageingS, 0);
    assert.equal(r.maxPauseS, 1800);
    assert.equal(
      r.command,
      "maitred simulate --router tr --tail throughput --workload chat --num-gpu-blocks 2000 --concurrency 4 --seed 7 --warmup 0s --duration 20s",
    );
    assert.match(r.digest, /^[0-9a-f]{16}$/);
    assert.match(TAIL_RUNS.describe(r), /^deepseek seed 7 tr --tail throughput: [\d.]+ steps\/min/);
  });
});

describe("bench:tail's scorecard", () => {
  it("per workload a row per preset against the reference, DeepSeek's by-hand check, and the commands", async () => {
    const t = testIo(made);
    const doc = await tailScorecard(args("--workloads", "deepseek,gemini", "--jobs", "2"), t.io);
    const out = t.stdout();
    assert.equal(t.noted[0], "# 18 runs, 2 at a time\n");
    assert.match(
      out,
      /^\n### DeepSeek trace: 2 × llama-3\.1-8b-h100, 26000 KV blocks per engine, 128 programs, 10 min warm-up \+ 50 min window\n\nSeeds 7, 1: /,
    );
    assert.ok(
      out.includes(
        "| tr --tail bounded | 240 / 300 | 225.0 | 150.0 / 300.0 | 1.50 | 1.0 / 2.0 / 30.0 | 400 | 100 / 900 | 50.0 | 2.0 |",
      ),
    );
    assert.ok(
      out.includes(
        "| default (reference) | - | 150.0 | 100.0 / 200.0 | 1.00 | 1.0 / 2.0 / - | 0 |",
      ),
      "a figure no seed measured is a dash",
    );
    assert.ok(out.includes("| 7 | 1.0000 | yes (same vs same) | 0 / 1800, 0 / 1800 |"));
    assert.equal(out.match(/^```sh$/gm)?.length, 2);
    assert.ok(out.includes("### Gemini trace"));
    assert.ok(!out.split("### Gemini trace")[1].includes("by hand"));
    assert.deepEqual(
      doc.throughput_by_hand.map((c) => [c.seed, c.ratio, c.identical]),
      [
        [7, 1, true],
        [1, 1, true],
      ],
    );
    assert.equal(doc.runs.length, 18);
  });
});
