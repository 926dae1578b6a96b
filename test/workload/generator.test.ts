import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { phaseOf } from "../../src/workload/generator.ts";
import { PRESETS, presetNames } from "../../src/workload/presets.ts";
import { createWorkload, programPlans } from "../../src/workload/workload.ts";
import { workloadStats } from "../../src/workload/workload-stats.ts";

/** Within `tol` (relative) of `want`, with a message that says why. */
function near(got: number, want: number, tol: number, what: string): void {
  assert.ok(
    Math.abs(got - want) <= tol * want,
    `${what}: got ${got.toFixed(1)}, want ${want} ± ${(tol * 100).toFixed(0)}%`,
  );
}

describe("synthetic generator", () => {
  it("the same seed gives identical programs; another seed gives different ones", () => {
    const a = programPlans(createWorkload({ kind: "preset", name: "swe-bash", seed: 5 }), 20);
    const b = programPlans(createWorkload({ kind: "preset", name: "swe-bash", seed: 5 }), 20);
    const c = programPlans(createWorkload({ kind: "preset", name: "swe-bash", seed: 6 }), 20);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a[0].steps, c[0].steps);
  });

  it("program i does not depend on which programs were generated before it", () => {
    const w = createWorkload({ kind: "preset", name: "claude-code", seed: 2 });
    const late = w.programAt(37);
    programPlans(w, 10);
    assert.deepEqual(
      createWorkload({ kind: "preset", name: "claude-code", seed: 2 }).programAt(37),
      late,
    );
  });

  it("every preset yields prompts that grow by at least the kept output and respect clips", () => {
    for (const name of presetNames()) {
      const p = PRESETS[name];
      for (const plan of programPlans(createWorkload({ kind: "preset", name, seed: 1 }), 50)) {
        assert.ok(plan.steps.length >= p.steps.min && plan.steps.length <= p.steps.max, name);
        assert.ok(plan.steps[0].promptTokens > p.sharedPrefixTokens, `${name}: P0 must include S`);
        plan.steps.forEach((s, i) => {
          assert.ok(s.completionTokens >= p.output.min && s.completionTokens <= p.output.max);
          if (i === plan.steps.length - 1) assert.equal(s.toolMs, 0, "last step has no tool");
          else {
            const next = plan.steps[i + 1].promptTokens;
            assert.ok(next - s.promptTokens >= s.completionTokens + p.observation.min, name);
          }
        });
      }
    }
  });

  it("swe-bash statistics match the measured DeepSeek trace figures", () => {
    const st = workloadStats(
      programPlans(createWorkload({ kind: "preset", name: "swe-bash" }), 3000),
    );
    near(st.steps.p50, 77, 0.08, "steps p50");
    near(st.steps.p90, 128, 0.1, "steps p90");
    near(st.firstPrompt.p50, 1653, 0.05, "first prompt p50");
    near(st.lastPrompt.p50, 35_000, 0.08, "last prompt p50");
    near(st.growthPerStep.p50, 436, 0.05, "growth per step p50");
    near(st.completion.p50, 93, 0.08, "output p50");
    near(st.completion.p90, 585, 0.1, "output p90");
    near(st.toolMs.p50, 268, 0.05, "tool p50");
    near(st.toolMs.p90, 462, 0.08, "tool p90");
    assert.ok(st.toolMs.max <= 60_000, "tool time is capped at the 60 s command timeout");
  });

  it("swe-bash-frontier needs about half the steps of swe-bash (median 36)", () => {
    const st = workloadStats(
      programPlans(createWorkload({ kind: "preset", name: "swe-bash-frontier" }), 2000),
    );
    near(st.steps.p50, 36, 0.1, "steps p50");
  });

  it("search-agent tool time has a 3 s median and a heavy tail; rounds are capped at 50", () => {
    const st = workloadStats(
      programPlans(createWorkload({ kind: "preset", name: "search-agent" }), 1000),
    );
    near(st.toolMs.p50, 3000, 0.05, "tool p50");
    assert.ok(st.toolMs.p99 > 5 * st.toolMs.p50, `p99 ${st.toolMs.p99} should be ≫ median`);
    assert.ok(st.steps.max <= 50);
  });

  it("claude-code shares a 15 K prefix and marks about 14% of gaps as human turns", () => {
    const plans = programPlans(createWorkload({ kind: "preset", name: "claude-code" }), 1000);
    let gaps = 0;
    let human = 0;
    for (const p of plans) {
      assert.ok(p.steps[0].promptTokens >= 15_001);
      for (const s of p.steps.slice(0, -1)) {
        gaps++;
        if (s.human) human++;
      }
    }
    near(human / gaps, 0.14, 0.1, "human share");
  });

  it("phases split a program into thirds", () => {
    assert.deepEqual(
      Array.from({ length: 9 }, (_, t) => phaseOf(t, 9)),
      [0, 0, 0, 1, 1, 1, 2, 2, 2],
    );
    assert.equal(phaseOf(0, 1), 0);
  });
});
