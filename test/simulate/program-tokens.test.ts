import assert from "node:assert/strict";
import { test } from "node:test";
import { chatPromptTokens } from "../../src/engine/chat-template.ts";
import { generatedTokenId } from "../../src/engine/output-sampler.ts";
import { decode } from "../../src/engine/tokenizer.ts";
import { createProgramTokens } from "../../src/simulate/program-tokens.ts";
import { createConversation } from "../../src/workload/conversation.ts";
import type { ProgramPlan } from "../../src/workload/types.ts";
import { createWorkload } from "../../src/workload/workload.ts";

const workload = createWorkload({ kind: "preset", name: "swe-bash", seed: 7 });

/** What an engine would answer: `n` generated word pieces, seeded per step. */
const answer = (step: number, n: number) =>
  Array.from({ length: n }, (_, k) => generatedTokenId(step * 7919 + 13, k));

function checkAgainstFullRender(plan: ProgramPlan, outputSize: (step: number) => number) {
  const tokens = createProgramTokens(plan, workload);
  const conversation = createConversation(plan, {
    workloadSeed: workload.seed,
    sharedPrefixTokens: workload.sharedPrefixTokens,
  });
  const texts: string[] = [];
  for (let i = 0; i < plan.steps.length; i++) {
    const got = tokens.prompt(i);
    const messages = conversation.messagesFor(i, texts);
    const want = chatPromptTokens(messages, { addGenerationPrompt: true });
    assert.deepEqual(got.tokens, want, `step ${i}: incremental ids differ from a full render`);
    assert.deepEqual(
      got.messageChars,
      messages.map((m) => (typeof m.content === "string" ? m.content.length : 0)),
      `step ${i}: message characters`,
    );
    const out = answer(i, outputSize(i));
    tokens.recordOutput(i, out);
    texts[i] = decode(out);
  }
}

test("incremental conversation ids equal chatPromptTokens of the full message list at every step", () => {
  const plan = workload.programAt(3);
  assert.ok(plan.steps.length > 5, "want a program with several steps");
  checkAgainstFullRender(plan, (i) => plan.steps[i].completionTokens);
});

test("an answer of another size than planned is replaced by the planned synthetic text, ids still match", () => {
  const plan = workload.programAt(5);
  checkAgainstFullRender(plan, (i) => plan.steps[i].completionTokens + 3);
});

test("a compaction (prompt falls below half) restarts the context and still matches a full render", () => {
  const plan: ProgramPlan = {
    programId: "p0",
    index: 0,
    source: "test",
    startOffsetMs: 0,
    steps: [
      { promptTokens: 2000, completionTokens: 50, toolMs: 10 },
      { promptTokens: 3000, completionTokens: 40, toolMs: 10 },
      { promptTokens: 900, completionTokens: 30, toolMs: 10 },
      { promptTokens: 1500, completionTokens: 20, toolMs: 0 },
    ],
  };
  checkAgainstFullRender(plan, (i) => plan.steps[i].completionTokens);
});

test("a retried step gets the same prompt again without growing the conversation", () => {
  const plan = workload.programAt(1);
  const tokens = createProgramTokens(plan, workload);
  const first = [...tokens.prompt(0).tokens];
  assert.deepEqual([...tokens.prompt(0).tokens], first);
  assert.throws(() => tokens.prompt(2), RangeError);
});

test("each step's prompt is the previous prompt plus the answer, so the prefix cache can hit", () => {
  const plan = workload.programAt(2);
  const tokens = createProgramTokens(plan, workload);
  const p0 = [...tokens.prompt(0).tokens];
  const out = answer(0, plan.steps[0].completionTokens);
  tokens.recordOutput(0, out);
  const p1 = tokens.prompt(1).tokens;
  assert.deepEqual(p1.slice(0, p0.length + out.length), [...p0, ...out]);
  assert.equal(p1.length, plan.steps[1].promptTokens, "prompt size = the plan's prompt tokens");
});
