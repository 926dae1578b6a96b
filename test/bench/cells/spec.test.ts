import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BENCH_CELLS_SPEC, cellsSettings } from "../../../src/bench/cells/spec.ts";
import { parseScriptArgs, ScriptArgsError } from "../../../src/bench/script-args.ts";

function settingsOf(argv: string[]) {
  const args = parseScriptArgs(BENCH_CELLS_SPEC, argv);
  assert.ok(!args.help);
  return cellsSettings(args);
}

describe("bench:cells settings", () => {
  it("the defaults: a 30 s warmup, 60 s phases, a 1 MiB buffer, the lone pass on", () => {
    const s = settingsOf([]);
    assert.equal(s.concurrency, 24);
    assert.equal(s.warmupMs, 30_000);
    assert.equal(s.phaseMs, 60_000);
    assert.equal(s.timeScale, 2.5);
    assert.equal(s.streamShare, 0.5);
    assert.equal(s.bodyBufferBytes, 1024 * 1024);
    assert.deepEqual([s.latencyRequests, s.largeRequests], [1000, 300]);
    assert.deepEqual([s.skipLone, s.haproxyNoTrim, s.haproxyLog], [false, false, undefined]);
    assert.equal(s.workload, "deepseek");
  });

  it("reads durations, sizes and switches as given", () => {
    const s = settingsOf([
      "--phase",
      "5s",
      "--warmup",
      "0",
      "--body-buffer",
      "64KiB",
      "--skip-lone",
      "--haproxy-log",
      "/tmp/h.log",
    ]);
    assert.deepEqual(
      [s.phaseMs, s.warmupMs, s.bodyBufferBytes, s.skipLone, s.haproxyLog],
      [5_000, 0, 65_536, true, "/tmp/h.log"],
    );
  });

  it("refuses fewer programs than cells", () => {
    assert.throws(() => settingsOf(["--concurrency", "2"]), ScriptArgsError);
  });
});
