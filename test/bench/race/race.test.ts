import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { originalArgs } from "../../../src/bench/race/original-process.ts";
import {
  asEngineAlone,
  contestantsOf,
  RACE_SPEC,
  raceCompareSettings,
  raceOrder,
  runRace,
  stopRace,
} from "../../../src/bench/race/race.ts";
import {
  pairedRatios,
  type RaceResult,
  raceChart,
  raceReport,
  readRaces,
} from "../../../src/bench/race/race-report.ts";
import type { RunReport } from "../../../src/bench/report.ts";
import { argsOf } from "../sims/helpers.ts";

const flags = (...argv: string[]) => argsOf(RACE_SPEC, argv);

const result = (
  repeat: number,
  sizeGiB: number,
  contestant: string,
  stepsPerMin: number,
  stepP99S: number,
): RaceResult => ({
  repeat,
  sizeGiB,
  contestant,
  stepsPerMin,
  stepP95S: null,
  stepP99S,
  cacheHitRate: 0.9,
  wallS: 1,
});

describe("bench:race", () => {
  it("rotates the contestants' order from repeat to repeat", () => {
    const names = ["original", "maitred bounded", "maitred throughput"];
    assert.deepEqual(raceOrder(names, 0), names);
    assert.deepEqual(raceOrder(names, 1), ["maitred bounded", "maitred throughput", "original"]);
    assert.deepEqual(raceOrder(names, 3), names);
  });

  it("races every contestant at every tier in every repeat, in the rotated order, and reads each report", async () => {
    const started: string[] = [];
    const contestants = ["a", "b"].map((name) => ({
      name,
      start: async () => ({ url: name, close: async () => {} }),
    }));
    const lines: string[] = [];
    const results = await runRace(
      contestants,
      [0, 200],
      2,
      async (sizeGiB, start) => {
        const { url } = await start("tr", [], 1, null);
        started.push(`${url}@${sizeGiB}`);
        return {
          steps_per_min: url === "a" ? 100 : 120,
          step_latency_ms: { p50: 1, p95: 2000, p99: 4000, mean: 1, max: 1 },
          prompt_tokens: { total: 1, cached: 1, prefilled: 0, cache_hit_rate: 0.5 },
        } as RunReport;
      },
      (line) => lines.push(line),
    );
    assert.deepEqual(started, ["a@0", "b@0", "a@200", "b@200", "b@0", "a@0", "b@200", "a@200"]);
    assert.deepEqual(results[0], {
      repeat: 1,
      sizeGiB: 0,
      contestant: "a",
      stepsPerMin: 100,
      stepP95S: 2,
      stepP99S: 4,
      cacheHitRate: 0.5,
      wallS: results[0].wallS,
    });
    assert.equal(lines.length, 8);
    assert.match(lines[7], /^race 8\/8: repeat 2, 200 GiB, a: 100 steps\/min, step p99 4\.0 s$/);
  });

  it("pairs each maitred race with the original's of the same repeat and tier", () => {
    const results = [
      result(1, 0, "original", 1000, 40),
      result(1, 0, "maitred bounded", 1050, 30),
      result(2, 0, "maitred bounded", 990, 50),
      result(2, 0, "original", 1100, 45),
      result(1, 200, "original", 2000, 10),
      result(1, 200, "maitred bounded", 1000, 10),
    ];
    assert.deepEqual(
      pairedRatios(results, 0, "maitred bounded", (r) => r.stepsPerMin).map((v) => v.toFixed(3)),
      ["1.050", "0.900"],
    );
    const out = raceReport(results);
    assert.match(out, /### No host tier/);
    assert.match(
      out,
      /\| maitred bounded \| 1050 \/ 990 \| 1020\.0 \| 30\.0 \/ 50\.0 \| 40\.0 \| 90\.0 \/ 90\.0 \| 0\.90–1\.05 \(2 races\) \| 0\.75–1\.11 \(2 races\) \|/,
    );
    assert.match(out, /### 200 GiB host tier per backend/);
    assert.match(out, /\| maitred bounded \| 1000 \| 1000\.0 .* \| 0\.50–0\.50 \(1 race\) \|/);
  });

  it("starts the original only when its snapshot is given, first, then the engine alone unless left out, then a maitred per preset", () => {
    assert.deepEqual(
      contestantsOf(flags()).map((c) => c.name),
      ["engine alone", "maitred bounded", "maitred throughput"],
    );
    assert.deepEqual(
      contestantsOf(
        flags("--thunderagent", "/tmp/ta.git", "--presets", "balanced", "--no-engine-alone"),
      ).map((c) => c.name),
      ["original", "maitred balanced"],
    );
  });

  it("reads every contestant against the original and against the engine alone of the same repeat", () => {
    const results = [
      result(1, 0, "original", 1000, 40),
      result(1, 0, "engine alone", 500, 20),
      result(1, 0, "maitred bounded", 1100, 30),
      result(2, 0, "maitred bounded", 900, 50),
      result(2, 0, "engine alone", 600, 25),
      result(2, 0, "original", 1200, 60),
    ];
    assert.deepEqual(
      pairedRatios(results, 0, "maitred bounded", (r) => r.stepsPerMin, "engine alone"),
      [1100 / 500, 900 / 600],
    );
    const out = raceReport(results);
    assert.match(
      out,
      /\| steps\/min ÷ the original's \| step p99 ÷ the original's \| steps\/min ÷ the engine alone's \| step p99 ÷ the engine alone's \|/,
    );
    // bounded: ÷ the original 1.10 and 0.75 (p99 0.75, 0.83); ÷ the engine alone 2.20 and 1.50 (p99 1.50, 2.00).
    assert.match(
      out,
      /\| maitred bounded \|.*\| 0\.75–1\.10 \(2 races\) \| 0\.75–0\.83 \(2 races\) \| 1\.50–2\.20 \(2 races\) \| 1\.50–2\.00 \(2 races\) \|/,
    );
    // The engine alone against the original, and no ratio of a baseline to itself.
    assert.match(
      out,
      /\| engine alone \|.*\| 0\.50–0\.50 \(2 races\) \| 0\.42–0\.50 \(2 races\) \| {2}\| {2}\|/,
    );
  });

  it("reads the presets against the engine alone when the original did not race", () => {
    const out = raceReport([
      result(1, 0, "engine alone", 500, 20),
      result(1, 0, "maitred bounded", 1000, 30),
    ]);
    assert.match(out, /^## maitred against the engine alone, live/);
    assert.doesNotMatch(out, /the original/);
    assert.match(
      out,
      /\| maitred bounded \| 1000 \|.*\| 2\.00–2\.00 \(1 race\) \| 1\.50–1\.50 \(1 race\) \|$/m,
    );
  });

  it("on a signal prints the finished races and exits with the signal's code", () => {
    const printed: string[] = [];
    const notes: string[] = [];
    const codes: number[] = [];
    const io = { note: (l: string) => notes.push(l), print: (t: string) => printed.push(t) };
    stopRace("SIGINT", [result(1, 0, "original", 1000, 40)], io, (c) => codes.push(c));
    stopRace("SIGTERM", [], io, (c) => codes.push(c));
    assert.deepEqual(codes, [130, 143]);
    assert.equal(printed.length, 1, "nothing to print when no race finished");
    assert.match(printed[0], /\| original \| 1000 \|/);
    assert.match(notes[1], /^SIGTERM: the race stops; 0 race\(s\) finished$/);
  });

  it("draws a point per router and tier at its mean step p99 and steps/min, shortest p99 first", () => {
    const svg = raceChart([
      result(1, 0, "original", 1000, 40),
      result(2, 0, "original", 1100, 60),
      result(1, 0, "engine alone", 500, 20),
      result(1, 0, "maitred throughput", 1200, 45),
      result(1, 200, "maitred bounded", 900, 9),
    ]);
    const labels = [...svg.matchAll(/font-size="10">([^<]+)</g)].map((m) => m[1]);
    assert.deepEqual(labels, ["engine", "throughput", "original", "bounded"]);
    assert.match(svg, />no tier</);
    assert.match(svg, />200 GiB</);
    // One line per tier: three points without a tier, one with.
    const lines = [...svg.matchAll(/<polyline points="([^"]+)"/g)].map(
      (m) => m[1].split(" ").length,
    );
    assert.deepEqual(lines, [3, 1]);
  });

  it("reads the races an earlier --json saved, a later file's race replacing the same one", () => {
    const files: Record<string, string> = {
      "a.json": JSON.stringify([
        result(1, 0, "original", 1000, 40),
        result(1, 0, "engine alone", 500, 20),
      ]),
      "b.json": JSON.stringify([result(1, 0, "original", 1111, 41)]),
    };
    const races = readRaces("a.json,b.json", (f) => files[f]);
    assert.deepEqual(
      races.map((r) => [r.contestant, r.stepsPerMin]),
      [
        ["original", 1111],
        ["engine alone", 500],
      ],
    );
  });

  it("says which saved file is not races, and where", () => {
    const read = (text: string) => () => text;
    assert.throws(() => readRaces("x.json", read("{")), /^Error: x\.json: not JSON/);
    assert.throws(() => readRaces("x.json", read("{}")), /x\.json: not a list of races/);
    assert.throws(
      () =>
        readRaces("x.json", read(JSON.stringify([result(1, 0, "original", 1, 1), { repeat: 1 }]))),
      /x\.json: entry 1 is not a race of bench:race --json/,
    );
    assert.throws(() => readRaces("x.json", read("[]")), /x\.json: no races/);
  });

  it("starts the engine alone as maitred's plain proxy whatever mode the race's cluster asks for", async () => {
    const asked: unknown[][] = [];
    const start = asEngineAlone(async (...args) => {
      asked.push(args);
      return { url: "u", close: async () => {} };
    });
    await start("tr", ["http://a", "http://b"], 5, 131072);
    assert.deepEqual(asked, [["default", ["http://a", "http://b"], 5, 131072]]);
  });

  it("runs bench compare's cluster: the DeepSeek trace, two backends, the tier per race", () => {
    const s = raceCompareSettings(flags("--concurrency", "32", "--repeats", "1"), 200);
    assert.equal(s.numBackends, 2);
    assert.equal(s.numGpuBlocks, 13_000);
    assert.equal(s.kvOffloadingSize, 200);
    assert.equal(s.concurrency, 32);
    assert.equal(s.timeScale, 5);
    assert.deepEqual(s.modes, ["tr"]);
    assert.ok(
      s.workload.kind === "trace" && s.workload.file.includes("deepseek"),
      JSON.stringify(s.workload),
    );
  });

  it("gives the original its tr router with its periods scaled as maitred's", () => {
    const args = originalArgs(9000, ["http://a", "http://b"], 5);
    assert.deepEqual(args.slice(0, 2), ["-m", "ThunderAgent"]);
    const at = (flag: string) => args[args.indexOf(flag) + 1];
    assert.equal(at("--backends"), "http://a,http://b");
    assert.equal(at("--router"), "tr");
    assert.equal(at("--scheduler-interval"), "1");
    assert.equal(at("--metrics-interval"), "1");
    assert.ok(args.includes("--metrics"));
  });
});
