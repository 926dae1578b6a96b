import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseScriptArgs, ScriptArgsError, scriptHelp } from "../../../src/bench/script-args.ts";
import { SOAK_SPEC, soakSettings } from "../../../src/bench/soak/spec.ts";

const settingsOf = (argv: string[]) => {
  const r = parseScriptArgs(SOAK_SPEC, argv);
  if (r.help) throw new Error("asked for help");
  return soakSettings(r);
};

describe("the soak's settings", () => {
  it("reads the defaults: 20 min, a minute of warm-up and of tail, wall seconds in ms", () => {
    const s = settingsOf([]);
    assert.equal(s.durationMs, 20 * 60_000);
    assert.deepEqual([s.warmupMs, s.tailMs], [60_000, 60_000]);
    assert.deepEqual(
      [s.tickMs, s.pollTimeoutMs, s.idleTimeoutMs, s.maxPauseMs, s.sampleMs],
      [1_000, 2_000, 45_000, 300_000, 5_000],
    );
    assert.equal(s.baselineMs, 60_000, "the idle timeout and 15 s fit in the warm-up");
    assert.deepEqual(s.limits, { maxRequestMs: 60_000, maxPauseMs: 300_000, slackMs: 7_000 });
    assert.equal(s.graceMs, 8_000, "two ticks and three poll timeouts");
    assert.deepEqual([s.cells, s.backendsPerRouter, s.totalBackends], [0, 2, 2]);
    assert.equal(s.router, "tr");
    assert.equal(s.logFile, undefined);
  });

  it("on a short run, warms up for a tenth of it and reads the baseline after the idle timeout", () => {
    const s = settingsOf(["--minutes", "1", "--idle-timeout", "10"]);
    assert.deepEqual([s.warmupMs, s.tailMs], [6_000, 6_000]);
    assert.equal(s.baselineMs, 25_000);
  });

  it("counts every cell's backends, and keeps the text of the header's figures as given", () => {
    const s = settingsOf(["--cells", "3", "--backends", "2", "--num-gpu-blocks", "6e3"]);
    assert.equal(s.totalBackends, 6);
    assert.equal(s.numGpuBlocks, 6_000);
    assert.equal(s.text.numGpuBlocks, "6e3");
  });

  it("refuses a router mode it does not know, naming the flag", () => {
    assert.throws(
      () => parseScriptArgs(SOAK_SPEC, ["--router", "fast"]),
      (err) => err instanceof ScriptArgsError && /--router/.test(err.message),
    );
  });

  it("names every flag in its help, with its default", () => {
    const help = scriptHelp(SOAK_SPEC);
    for (const flag of Object.keys(SOAK_SPEC.flags)) assert.match(help, new RegExp(`--${flag} `));
    assert.match(help, /--minutes <m> +wall minutes of load \(default: 20\)/);
  });
});
