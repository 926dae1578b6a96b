import assert from "node:assert/strict";
import { test } from "node:test";
import { parseSetting } from "../../src/config/setting.ts";
import { ConfigError } from "../../src/errors.ts";
import { loadWorkload, parseWorkloadArg } from "../../src/workload/load-workload.ts";
import { scaleToolTimes } from "../../src/workload/tool-time-scale.ts";
import { createWorkload } from "../../src/workload/workload.ts";
import { WORKLOAD_SETTINGS } from "../../src/workload/workload-settings.ts";

/** The `--workload` value loaded as it is and with its tool times × `factor`. */
async function plainAndScaled(workload: string, factor: number) {
  const spec = parseWorkloadArg(workload, { seed: 7 });
  return [await loadWorkload(spec), await loadWorkload({ ...spec, toolTimeScale: factor })];
}

test("--tool-time-scale multiplies every tool time and leaves the rest of each step alone", async () => {
  const [plain, slow] = await plainAndScaled("deepseek", 50);
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
  const [plain, slow] = await plainAndScaled("mix:chat=0.5,deepseek=0.5", 3);
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
  assert.ok(tools > 0 && plain.mix !== undefined && slow.mix !== undefined);
});

test("human waits of a preset are scaled like tool calls; factor 1 is the workload itself", () => {
  const chat = createWorkload({ kind: "preset", name: "chat", seed: 4 });
  assert.equal(scaleToolTimes(chat, 1), chat);
  const slow = scaleToolTimes(chat, 5);
  let human = 0;
  for (let i = 0; i < 10; i++) {
    chat.programAt(i).steps.forEach((s, k) => {
      const b = slow.programAt(i).steps[k];
      assert.equal(b.toolMs, Math.round(s.toolMs * 5));
      assert.equal(b.human, s.human);
      if (s.human) human += s.toolMs;
    });
  }
  assert.ok(human > 0, "chat sessions have human waits, or the check is vacuous");
});

test("the flag's value is a finite number > 0; anything else is a ConfigError naming it", () => {
  const read = (raw: string) =>
    parseSetting(WORKLOAD_SETTINGS.toolTimeScale, raw, "--tool-time-scale");
  assert.equal(read("50"), 50);
  assert.equal(read("0.25"), 0.25);
  for (const bad of ["0", "-1", "abc", "", " ", "NaN", "Infinity", "1e999"]) {
    assert.throws(
      () => read(bad),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.field === "tool-time-scale" &&
        e.message.endsWith("(from --tool-time-scale)"),
      `value ${JSON.stringify(bad)}`,
    );
  }
});
