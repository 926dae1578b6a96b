import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveCommonFlags } from "../../src/bench/bench-options.ts";
import { ConfigError } from "../../src/errors.ts";
import { resolveSimulateFlags } from "../../src/simulate/simulate-options.ts";
import { loadWorkload } from "../../src/workload/load-workload.ts";

test("--tool-time-scale multiplies every tool time and leaves the rest of each step alone", async () => {
  const plain = await loadWorkload(resolveSimulateFlags({ workload: "deepseek" }).workload);
  const slow = await loadWorkload(
    resolveSimulateFlags({ workload: "deepseek", toolTimeScale: "50" }).workload,
  );
  let tools = 0;
  for (let i = 0; i < 20; i++) {
    const a = plain.programAt(i);
    const b = slow.programAt(i);
    assert.equal(b.steps.length, a.steps.length);
    a.steps.forEach((s, k) => {
      assert.equal(b.steps[k].toolMs, Math.round(s.toolMs * 50), `program ${i} step ${k}`);
      assert.equal(b.steps[k].promptTokens, s.promptTokens);
      assert.equal(b.steps[k].completionTokens, s.completionTokens);
      tools += s.toolMs;
    });
  }
  assert.ok(tools > 0, "the trace has tool times, or the check is vacuous");
});

test("--tool-time-scale scales a mix once, by index and by closed-loop slot alike", async () => {
  const flags = { workload: "mix:chat=0.5,deepseek=0.5" };
  const plain = await loadWorkload(resolveSimulateFlags(flags).workload);
  const slow = await loadWorkload(resolveSimulateFlags({ ...flags, toolTimeScale: "3" }).workload);
  let tools = 0;
  for (let i = 0; i < 6; i++) {
    plain.programAt(i).steps.forEach((s, k) => {
      assert.equal(slow.programAt(i).steps[k].toolMs, Math.round(s.toolMs * 3));
      tools += s.toolMs;
    });
    for (const c of [0, 1]) {
      const a = plain.mix?.programOf(c, i, i);
      const b = slow.mix?.programOf(c, i, i);
      a?.steps.forEach((s, k) => {
        assert.equal(b?.steps[k].toolMs, Math.round(s.toolMs * 3), `component ${c} program ${i}`);
      });
    }
  }
  assert.ok(tools > 0);
});

test("bench takes --tool-time-scale beside --time-scale, and bad values name the flag", () => {
  const o = resolveCommonFlags({ toolTimeScale: "20", timeScale: "5" });
  assert.equal(o.workload.toolTimeScale, 20);
  assert.equal(o.timeScale, 5);
  for (const bad of ["0", "-1", "abc", "", "Infinity"]) {
    assert.throws(
      () => resolveSimulateFlags({ toolTimeScale: bad }),
      (e: unknown) => e instanceof ConfigError && e.field === "--tool-time-scale",
      `value ${JSON.stringify(bad)}`,
    );
  }
});
