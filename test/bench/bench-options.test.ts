import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DEFAULT_CONCURRENCY,
  resolveBenchFlags,
  resolveCompareFlags,
} from "../../src/bench/bench-options.ts";
import { ConfigError } from "../../src/errors.ts";
import { runMaitred } from "../cli/run-maitred.ts";

function failsOn(fn: () => unknown, field: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ConfigError, `want ConfigError, got ${e}`);
    assert.equal(e.field, field);
    return true;
  });
}

describe("bench flags", () => {
  it("defaults: DeepSeek trace, a 30 s warm-up and a 120 s window", () => {
    const o = resolveBenchFlags({});
    assert.deepEqual(o.workload, { kind: "trace", file: "deepseek", seed: 1, staggerMs: 100 });
    assert.equal(o.concurrency, DEFAULT_CONCURRENCY);
    assert.equal(o.warmupMs, 30_000);
    assert.equal(o.durationMs, 120_000);
    assert.equal(o.maxPrograms, undefined);
    assert.equal(o.label, "http://127.0.0.1:8000");
  });

  it("--programs alone runs to completion with no warm-up and no window", () => {
    const o = resolveBenchFlags({ programs: "10" });
    assert.equal(o.maxPrograms, 10);
    assert.equal(o.durationMs, undefined);
    assert.equal(o.warmupMs, 0);
  });

  it("durations take units, presets and seeds pass into the workload spec", () => {
    const o = resolveBenchFlags({
      workload: "search-agent",
      warmup: "1m",
      duration: "500ms",
      seed: "9",
      stagger: "0",
      maxContext: "32768",
    });
    assert.deepEqual(o.workload, {
      kind: "preset",
      name: "search-agent",
      seed: 9,
      staggerMs: 0,
      maxContextTokens: 32_768,
    });
    assert.equal(o.warmupMs, 60_000);
    assert.equal(o.durationMs, 500);
  });

  it("a target URL is its base: a trailing /v1 and slash are the API's, credentials are dropped", () => {
    assert.equal(resolveBenchFlags({ url: "http://h:1/v1/" }).url, "http://h:1");
    assert.equal(resolveBenchFlags({ url: ["http://u:p@h:1/x"] }).url, "http://h:1/x");
    assert.deepEqual(resolveCompareFlags({ url: ["http://a:1/v1", "http://b:2"] }).extraUrls, [
      "http://a:1",
      "http://b:2",
    ]);
  });

  it("bad values name their flag", () => {
    failsOn(() => resolveBenchFlags({ concurrency: "0" }), "concurrency");
    failsOn(() => resolveBenchFlags({ timeScale: "-2" }), "time-scale");
    failsOn(() => resolveBenchFlags({ duration: "soon" }), "duration");
    failsOn(() => resolveBenchFlags({ url: "ftp://x" }), "url");
    failsOn(() => resolveBenchFlags({ workload: "bogus" }), "workload");
    failsOn(() => resolveBenchFlags({ seed: "1.5" }), "seed");
  });
});

describe("compare flags", () => {
  it("defaults to the default and tr modes on one backend", () => {
    const o = resolveCompareFlags({});
    assert.deepEqual(o.modes, ["default", "tr"]);
    assert.equal(o.numBackends, 1);
    assert.deepEqual(o.extraUrls, []);
  });

  it("an unknown mode is rejected with the choices", () => {
    assert.throws(
      () => resolveCompareFlags({ modes: "default,fast" }),
      /must list only default, tr, direct, got "fast"/,
    );
  });

  it("extra URLs are kept in order without a trailing slash or /v1", () => {
    const o = resolveCompareFlags({ url: ["http://a:1/", "http://b:2/v1"] });
    assert.deepEqual(o.extraUrls, ["http://a:1", "http://b:2"]);
  });
});

describe("--tool-time-scale", () => {
  it("bench and compare put it in the workload spec, beside --time-scale", () => {
    const o = resolveBenchFlags({ toolTimeScale: "20", timeScale: "5" });
    assert.equal(o.workload.toolTimeScale, 20);
    assert.equal(o.timeScale, 5, "the time scale is the driver's own and stays apart");
    assert.equal(resolveCompareFlags({ toolTimeScale: "1.5" }).workload.toolTimeScale, 1.5);
    assert.equal(resolveBenchFlags({}).workload.toolTimeScale, undefined);
  });

  it("0, negative, NaN, infinite and text values name the flag", () => {
    for (const bad of ["0", "-1", "NaN", "Infinity", "abc", ""]) {
      failsOn(() => resolveBenchFlags({ toolTimeScale: bad }), "tool-time-scale");
      failsOn(() => resolveCompareFlags({ toolTimeScale: bad }), "tool-time-scale");
    }
  });

  it("maitred bench and bench compare exit 2 on a bad value, before any request", async () => {
    for (const cmd of [["bench"], ["bench", "compare"]]) {
      const r = await runMaitred([...cmd, "--tool-time-scale", "-3"]);
      assert.equal(r.code, 2, cmd.join(" "));
      assert.match(r.stderr, /--tool-time-scale/);
      assert.equal(r.stdout, "", "no report: nothing ran");
    }
  });
});
