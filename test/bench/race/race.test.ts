import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { originalArgs } from "../../../src/bench/race/original-process.ts";
import {
  asEngineAlone,
  contestantsOf,
  RACE_SPEC,
  race,
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
import { ConfigError } from "../../../src/errors.ts";
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

  it("draws a point per router and tier at its mean step p99 and steps/min, shortest p99 first, routers on one spot as one", () => {
    const svg = raceChart([
      result(1, 0, "original", 1000, 40),
      result(2, 0, "original", 1100, 60),
      result(1, 0, "engine alone", 500, 20),
      result(1, 0, "maitred throughput", 1200, 45),
      result(1, 200, "engine alone", 900, 9),
      result(1, 200, "maitred bounded", 905, 9.1),
      result(1, 200, "maitred throughput", 1200, 50),
    ]);
    const labels = [...svg.matchAll(/font-size="10">([^<]+)</g)].map((m) => m[1]);
    assert.deepEqual(labels, ["engine", "throughput", "original", "engine, bounded", "throughput"]);
    assert.match(svg, />no tier</);
    assert.match(svg, />200 GiB</);
    const lines = [...svg.matchAll(/<polyline points="([^"]+)"/g)].map((m) => m[1].split(" "));
    assert.deepEqual(
      lines.map((l) => l.length),
      [3, 2],
    );
    // The original's point is its mean: 1050 steps/min, at the height between 1000's and 1100's,
    // and at p99 50 s, where the tier's throughput point (50 s) also is.
    const at = (pt: string) => pt.split(",").map(Number);
    const [, throughput, original] = lines[0].map(at);
    const [, tierThroughput] = lines[1].map(at);
    assert.equal(original[0], tierThroughput[0]);
    assert.ok(original[1] > throughput[1], "1050 steps/min is drawn below 1200");
    const yEngine = at(lines[0][0])[1]; // the engine alone: 500 steps/min
    const scale = (yEngine - throughput[1]) / (1200 - 500); // pixels per step/min
    assert.ok(Math.abs(yEngine - original[1] - scale * (1050 - 500)) < 0.2);
  });

  it("leaves a race without a p99 out of its router's point", () => {
    const svg = raceChart([
      { ...result(1, 0, "original", 5000, 40), stepP99S: null },
      result(2, 0, "original", 1000, 40),
      result(1, 0, "engine alone", 500, 20),
    ]);
    const [line] = [...svg.matchAll(/<polyline points="([^"]+)"/g)].map((m) => m[1].split(" "));
    const [engine, original] = line.map((pt) => pt.split(",").map(Number));
    // 1000 steps/min is twice the engine alone's 500: the original's point is not 3000.
    const base = Number(/<line [^>]*y1="([\d.]+)"/.exec(svg)?.[1]); // the first grid line: 0
    assert.ok(Math.abs((base - original[1]) / (base - engine[1]) - 2) < 0.01);
  });

  it("reads several saved runs as one, each file's repeats after the previous ones'", () => {
    const files: Record<string, string> = {
      "a.json": JSON.stringify([
        result(1, 0, "original", 1000, 40),
        result(2, 0, "original", 900, 40),
      ]),
      "b.json": JSON.stringify([result(1, 0, "original", 1111, 41)]),
    };
    const races = readRaces("a.json,b.json", (f) => files[f]);
    assert.deepEqual(
      races.map((r) => [r.repeat, r.stepsPerMin]),
      [
        [1, 1000],
        [2, 900],
        [3, 1111],
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

  it("with --from-json races nothing: reports, joins into --json and draws the saved races; a bad file is a ConfigError", async () => {
    const dir = mkdtempSync(join(tmpdir(), "race-test-"));
    try {
      const saved = join(dir, "race.json");
      writeFileSync(saved, JSON.stringify([result(1, 0, "original", 1000, 40)]));
      const printed: string[] = [];
      const io = { note: () => {}, print: (t: string) => printed.push(t) };
      const out = join(dir, "out.json");
      const svg = join(dir, "race.svg");
      const races = await race(
        flags("--from-json", `${saved},${saved}`, "--json", out, "--svg", svg),
        io,
      );
      assert.deepEqual(
        races.map((r) => r.repeat),
        [1, 2],
      );
      assert.match(printed.join(""), /\| original \| 1000 \/ 1000 \|/);
      assert.equal(JSON.parse(readFileSync(out, "utf8")).length, 2);
      assert.match(readFileSync(svg, "utf8"), /^<svg /);
      const bad = join(dir, "bad.json");
      writeFileSync(bad, "{}");
      await assert.rejects(race(flags("--from-json", bad), io), (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /^--from-json: .*bad\.json: not a list of races$/);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
