import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chatPromptTokens } from "../../src/engine/chat-template.ts";
import { countTokens, textOfTokens } from "../../src/engine/tokenizer.ts";
import {
  buildStepMessages,
  COMPACTION_FRACTION,
  createConversation,
  layoutSteps,
} from "../../src/workload/conversation.ts";
import { loadWorkload } from "../../src/workload/load-workload.ts";
import type { ProgramPlan } from "../../src/workload/types.ts";
import { createWorkload } from "../../src/workload/workload.ts";

const OPTS = { workloadSeed: 1, sharedPrefixTokens: 200 };
const promptIds = (plan: ProgramPlan, i: number, texts?: (string | undefined)[]) =>
  chatPromptTokens(buildStepMessages(plan, i, OPTS, texts), { addGenerationPrompt: true });

function plan(steps: [number, number][], index = 0): ProgramPlan {
  return {
    programId: `p${index}`,
    index,
    source: "test",
    startOffsetMs: 0,
    steps: steps.map(([p, c]) => ({ promptTokens: p, completionTokens: c, toolMs: 1 })),
  };
}

describe("conversation messages", () => {
  it("every step of a DeepSeek trace program has exactly the trace's prompt tokens", async () => {
    const w = await loadWorkload({ kind: "trace", file: "deepseek" });
    const p = w.programAt(0);
    const conv = createConversation(p, {
      workloadSeed: w.seed,
      sharedPrefixTokens: w.sharedPrefixTokens,
    });
    p.steps.forEach((s, i) => {
      const ids = chatPromptTokens(conv.messagesFor(i), { addGenerationPrompt: true });
      assert.equal(
        ids.length,
        s.promptTokens,
        `step ${i}: got ${ids.length}, want ${s.promptTokens}`,
      );
    });
  });

  it("each prompt extends the previous one token for token (prefix shared between turns)", () => {
    const p = createWorkload({ kind: "preset", name: "swe-bash", seed: 4 }).programAt(3);
    for (let i = 1; i < Math.min(p.steps.length, 12); i++) {
      const prev = promptIds(p, i - 1);
      const next = promptIds(p, i);
      assert.deepEqual(next.slice(0, prev.length), prev, `step ${i} must start with step ${i - 1}`);
    }
  });

  it("the appended assistant turn has exactly the previous completion length", () => {
    const p = plan([
      [1000, 77],
      [1500, 40],
      [1700, 5],
    ]);
    const msgs = buildStepMessages(p, 2, OPTS);
    assert.deepEqual(
      msgs.map((m) => m.role),
      ["system", "user", "assistant", "user", "assistant", "user"],
    );
    assert.equal(countTokens(msgs[2].content as string), 77);
    assert.equal(countTokens(msgs[4].content as string), 40);
  });

  it("programs of one workload share the system prompt but not their task", () => {
    const a = promptIds(plan([[1000, 10]], 0), 0);
    const b = promptIds(plan([[1000, 10]], 1), 0);
    const shared = 4 + OPTS.sharedPrefixTokens;
    assert.deepEqual(a.slice(0, shared), b.slice(0, shared));
    assert.notDeepEqual(a.slice(shared, shared + 20), b.slice(shared, shared + 20));
  });

  it("the same plan and seed give identical token ids (what the simulator relies on)", () => {
    const p = plan(
      [
        [900, 30],
        [1300, 30],
      ],
      5,
    );
    assert.deepEqual(promptIds(p, 1), promptIds(p, 1));
    const other = chatPromptTokens(buildStepMessages(p, 1, { ...OPTS, workloadSeed: 2 }));
    assert.notDeepEqual(promptIds(p, 1).slice(210), other.slice(210));
  });

  it("a real response text of the planned size is sent back verbatim; a wrong size is replaced", () => {
    const p = plan([
      [1000, 20],
      [1400, 20],
    ]);
    const real = textOfTokens(20, 999);
    assert.equal(buildStepMessages(p, 1, OPTS, [real])[2].content, real);
    const wrong = textOfTokens(19, 999);
    const msgs = buildStepMessages(p, 1, OPTS, [wrong]);
    assert.notEqual(msgs[2].content, wrong);
    assert.equal(countTokens(msgs[2].content as string), 20);
    assert.equal(promptIds(p, 1, [real]).length, 1400);
  });

  it("growth smaller than the completion shrinks the assistant turn and keeps the prompt exact", () => {
    // Hidden reasoning: 500 generated, prompt grows by only 300.
    const l = layoutSteps(
      plan([
        [2000, 500],
        [2300, 10],
      ]),
      200,
    );
    assert.ok(l[1].assistantTokens < 500);
    assert.equal(l[1].promptTokens, 2300);
  });

  it("a shrink overshoots by the minimum and the next observation absorbs the excess", () => {
    const l = layoutSteps(
      plan([
        [2000, 50],
        [1990, 50],
        [2600, 10],
      ]),
      200,
    );
    assert.ok(l[1].promptTokens > 1990, "append-only: the prompt cannot shrink");
    assert.ok(
      l[1].promptTokens - 2000 <= 10,
      `overshoot ${l[1].promptTokens - 2000} should be minimal`,
    );
    assert.equal(l[2].promptTokens, 2600, "back on the trace at the next step");
  });

  it("a compaction (prompt below half the previous) starts a fresh context", () => {
    const big = 10_000;
    const l = layoutSteps(
      plan([
        [big, 50],
        [Math.floor(big * COMPACTION_FRACTION) - 1, 50],
      ]),
      200,
    );
    assert.equal(l[1].fresh, true);
    const msgs = buildStepMessages(
      plan([
        [big, 50],
        [4999, 50],
      ]),
      1,
      OPTS,
    );
    assert.deepEqual(
      msgs.map((m) => m.role),
      ["system", "user"],
    );
    assert.equal(chatPromptTokens(msgs, { addGenerationPrompt: true }).length, 4999);
  });

  it("a first prompt smaller than the shared prefix shrinks the system prompt to a prefix of it", () => {
    const small = promptIds(plan([[100, 5]], 0), 0);
    const normal = promptIds(plan([[1000, 5]], 1), 0);
    assert.equal(small.length, 100);
    // header + "\n" + the system text's first tokens agree.
    assert.deepEqual(small.slice(0, 50), normal.slice(0, 50));
  });

  it("Gemini trace prompts (hidden reasoning) stay at or just above the trace", async () => {
    const w = await loadWorkload({ kind: "trace", file: "gemini" });
    let worst = 0;
    for (let i = 0; i < 100; i++) {
      const p = w.programAt(i);
      layoutSteps(p, w.sharedPrefixTokens).forEach((l, k) => {
        assert.ok(l.promptTokens >= p.steps[k].promptTokens);
        worst = Math.max(worst, l.promptTokens - p.steps[k].promptTokens);
      });
    }
    assert.ok(worst < 1000, `worst overshoot ${worst} tokens`);
  });
});
