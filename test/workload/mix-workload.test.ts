import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../src/errors.ts";
import { conversationOptionsFor, createConversation } from "../../src/workload/conversation.ts";
import { loadWorkload, parseWorkloadArg } from "../../src/workload/load-workload.ts";
import { interleaveSlots, slotCounts } from "../../src/workload/mix-workload.ts";
import { createProgramFeed } from "../../src/workload/program-feed.ts";
import type { ProgramPlan } from "../../src/workload/types.ts";
import { createWorkload } from "../../src/workload/workload.ts";

const MIX = "mix:chat@interactive=0.2,swe-bash@bulk=0.8";

/** The first `n` programs a closed loop of `concurrency` slots launches, slot by slot. */
function launches(value: string, concurrency: number, n: number, seed = 1) {
  const feed = createProgramFeed(createWorkload(parseWorkloadArg(value, { seed })), concurrency);
  const out: { slot: number; plan: ProgramPlan }[] = [];
  for (let i = 0; i < n; i++) {
    const slot = i % concurrency;
    out.push({ slot, plan: feed.next(slot) });
  }
  return out;
}

describe("mixed workloads", () => {
  it("parses components with their class and weight", () => {
    const spec = parseWorkloadArg(MIX, { seed: 3 });
    assert.equal(spec.kind, "mix");
    if (spec.kind !== "mix") return;
    assert.deepEqual(
      spec.components.map((c) => [c.name, c.spec.kind, c.priorityClass, c.weight]),
      [
        ["chat", "preset", "interactive", 0.2],
        ["swe-bash", "preset", "bulk", 0.8],
      ],
    );
    const noClass = parseWorkloadArg("mix:chat=1,deepseek=3");
    assert.ok(noClass.kind === "mix" && noClass.components[1].spec.kind === "trace");
  });

  it("rejects bad components with a ConfigError naming --workload", () => {
    for (const bad of [
      "mix:",
      "mix:chat@vip=1",
      "mix:chat=0",
      "mix:nonsense=1",
      "mix:chat=1,chat=2",
      "mix:mix:chat=1=1",
    ]) {
      assert.throws(
        () => parseWorkloadArg(bad),
        (e: unknown) => e instanceof ConfigError && e.field === "workload",
        bad,
      );
    }
  });

  it("weights are shares of the slots: 128 slots give 26 chat and 102 agents, interleaved", () => {
    assert.deepEqual(slotCounts([0.2, 0.8], 128), [26, 102]);
    assert.deepEqual(slotCounts([1, 1, 1], 4), [2, 1, 1], "largest remainders, ties to the first");
    const slots = interleaveSlots([26, 102]);
    assert.equal(slots.filter((c) => c === 0).length, 26);
    assert.ok(slots.slice(0, 10).includes(0), "the ramp-up mixes both components");
  });

  it("a slot keeps its component's class; ids follow launch order; runs are deterministic", () => {
    const a = launches(MIX, 10, 40);
    const b = launches(MIX, 10, 40);
    assert.deepEqual(a, b, "same seed, same programs");
    assert.deepEqual(
      a.map((l) => l.plan.programId),
      a.map((_, i) => `p${i}`),
    );
    const classBySlot = new Map<number, string | undefined>();
    for (const { slot, plan } of a) {
      const seen = classBySlot.get(slot);
      if (seen !== undefined) assert.equal(plan.priorityClass, seen, `slot ${slot} changed class`);
      classBySlot.set(slot, plan.priorityClass);
      assert.equal(plan.source.startsWith("chat:"), plan.priorityClass === "interactive");
    }
    assert.equal([...classBySlot.values()].filter((c) => c === "interactive").length, 2);
  });

  it("each component has its own system prompt", () => {
    const w = createWorkload(parseWorkloadArg(MIX));
    const feed = createProgramFeed(w, 10);
    const chat = feed.next(w.mix?.slots(10).indexOf(0) as number);
    const agent = feed.next(w.mix?.slots(10).indexOf(1) as number);
    const system = (p: ProgramPlan) =>
      createConversation(p, conversationOptionsFor(w, p)).messagesFor(0)[0].content;
    assert.notEqual(system(chat), system(agent));
    assert.equal(chat.systemPrompt?.tokens, 500, "the chat preset's 500-token prefix");
    assert.equal(agent.systemPrompt?.tokens, 200, "swe-bash's 200-token prefix");
  });

  it("--class-mix classes the programs of components that name no class", () => {
    const spec = parseWorkloadArg("mix:chat@interactive=0.5,swe-bash=0.5", { seed: 2 });
    spec.classMix = [{ priorityClass: "default", weight: 1 }];
    const w = createWorkload(spec);
    const feed = createProgramFeed(w, 4);
    const plans = [0, 1, 2, 3].map((s) => feed.next(s));
    for (const p of plans) {
      const want = p.source.startsWith("chat:") ? "interactive" : "default";
      assert.equal(p.priorityClass, want, p.source);
    }
  });

  it("loadWorkload builds a mix with a shipped trace, its programs cut to the context limit", async () => {
    const spec = parseWorkloadArg("mix:chat@interactive=1,deepseek@bulk=1", {
      seed: 1,
      maxContextTokens: 8000,
    });
    const w = await loadWorkload(spec);
    const feed = createProgramFeed(w, 2);
    const trace = [0, 1].map((s) => feed.next(s)).find((p) => p.source.startsWith("deepseek:"));
    assert.ok(trace, "one slot runs the trace");
    assert.ok(trace.steps.every((s) => s.promptTokens + s.completionTokens <= 8000));
  });

  it("a plain workload's feed is its sequence, whatever the slot", () => {
    const w = createWorkload({ kind: "preset", name: "chat", seed: 1 });
    const feed = createProgramFeed(w, 3);
    assert.deepEqual(
      [2, 0, 2].map((s) => feed.next(s).programId),
      ["p0", "p1", "p2"],
    );
  });
});

describe("chat preset", () => {
  it("short prompts, few turns, a human think time between turns", () => {
    const w = createWorkload({ kind: "preset", name: "chat", seed: 1 });
    const plans = Array.from({ length: 300 }, (_, i) => w.programAt(i));
    const turns = plans.map((p) => p.steps.length).sort((a, b) => a - b);
    assert.ok(turns[150] <= 6, `median turns ${turns[150]}, want few`);
    const longest = Math.max(...plans.flatMap((p) => p.steps.map((s) => s.promptTokens)));
    assert.ok(longest < 16_000, `longest prompt ${longest} tokens, want short`);
    const gaps = plans.flatMap((p) => p.steps.slice(0, -1));
    assert.ok(
      gaps.every((s) => s.human === true),
      "every gap is a human turn",
    );
    const think = gaps.map((s) => s.toolMs).sort((a, b) => a - b);
    const median = think[Math.floor(think.length / 2)];
    assert.ok(median > 5000 && median < 20_000, `median think time ${median} ms, want ≈ 10 s`);
  });
});
