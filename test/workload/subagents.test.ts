import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseSetting } from "../../src/config/setting.ts";
import { chatPromptTokens, GENERATION_PROMPT_OVERHEAD } from "../../src/engine/chat-template.ts";
import { createProgramTokens } from "../../src/simulate/program-tokens.ts";
import { conversationOptionsFor, createConversation } from "../../src/workload/conversation.ts";
import { loadWorkload, parseWorkloadArg } from "../../src/workload/load-workload.ts";
import { PRESETS } from "../../src/workload/presets.ts";
import { sendsParentLink, subagentCount, subagentPlans } from "../../src/workload/subagents.ts";
import { scaleToolTimes } from "../../src/workload/tool-time-scale.ts";
import type { ProgramPlan, StepPlan, Workload } from "../../src/workload/types.ts";
import { markUnreleased } from "../../src/workload/unreleased.ts";
import { createWorkload, programPlans, truncateToContext } from "../../src/workload/workload.ts";
import { WORKLOAD_SETTINGS, workloadSpecOf } from "../../src/workload/workload-settings.ts";

/** Seeded: FC_SEED replays a failure (fast-check prints the seed of any failing run). */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

const PRESET = "claude-code-subagents";
const preset = (seed: number, more: object = {}) =>
  createWorkload({ kind: "preset", name: PRESET, seed, ...more });

/** The first `n` programs of `w` that launch sub-agents. */
function spawning(w: Workload, n: number): ProgramPlan[] {
  const out: ProgramPlan[] = [];
  for (let i = 0; out.length < n; i++) {
    const p = w.programAt(i);
    if (subagentCount(p) > 0) out.push(p);
  }
  return out;
}

const GEN = GENERATION_PROMPT_OVERHEAD;

describe("claude-code-subagents preset", () => {
  it("is deterministic per seed, and another seed gives other programs", () => {
    const a = programPlans(preset(5), 40);
    assert.deepEqual(a, programPlans(preset(5), 40));
    assert.notDeepEqual(a, programPlans(preset(6), 40));
    assert.ok(
      a.some((p) => subagentCount(p) > 0),
      "some of 40 programs launch sub-agents",
    );
    assert.deepEqual(spawning(preset(5), 3), spawning(preset(5), 3));
  });

  it("launches 1–4 sub-agents on tool-call steps only, and the parent's shape is claude-code's", () => {
    const params = PRESETS[PRESET];
    const sub = params.subagents;
    assert.ok(sub);
    let launches = 0;
    let gaps = 0;
    for (const p of programPlans(preset(2), 300)) {
      p.steps.forEach((s, i) => {
        if (i < p.steps.length - 1 && s.human !== true) gaps++;
        if (s.spawn === undefined) return;
        launches++;
        assert.ok(i < p.steps.length - 1, "never on the last step");
        assert.notEqual(s.human, true, "never before a human turn");
        assert.ok(s.spawn.length >= 1 && s.spawn.length <= sub.countWeights.length);
        for (const c of s.spawn) {
          const n = c.steps.length;
          assert.ok(n >= sub.steps.min && n <= sub.steps.max);
          assert.equal(c.steps[n - 1].toolMs, 0);
          assert.ok(
            c.steps.every((cs) => cs.spawn === undefined),
            "no grandchildren",
          );
          // Brief within its clip on top of the parent's first prompt (+ one message's overhead).
          const brief = c.steps[0].promptTokens - p.steps[0].promptTokens - 4;
          assert.ok(brief >= sub.brief.min && brief <= sub.brief.max, `brief ${brief}`);
        }
      });
    }
    // 1.27% of tool-call steps; over ~40 K of them the share is within a few tenths of a point.
    const share = launches / gaps;
    assert.ok(Math.abs(share - sub.spawnShare) < 0.004, `launch share ${share}`);
  });

  it("sub-agent plans: ids <parent>.c<n> across steps, the parent's class, prompt and release", () => {
    const w = markUnreleased(
      createWorkload(parseWorkloadArg(`mix:chat=1,${PRESET}@bulk=1`, { seed: 3 })),
      1,
    );
    const mix = w.mix;
    assert.ok(mix);
    let parent: ProgramPlan | undefined;
    for (let n = 0; parent === undefined; n++) {
      const p = mix.programOf(1, n, 40 + n);
      if (p.steps.filter((s) => s.spawn !== undefined).length >= 2) parent = p;
    }
    const ids: string[] = [];
    parent.steps.forEach((s, i) => {
      const kids = subagentPlans(parent, i);
      assert.equal(kids.length, s.spawn?.length ?? 0);
      for (const k of kids) {
        ids.push(k.programId);
        assert.equal(k.index, parent.index);
        assert.equal(k.priorityClass, "bulk");
        assert.equal(k.unreleased, true);
        assert.deepEqual(k.systemPrompt, parent.systemPrompt);
        assert.deepEqual(k.subagent, {
          parentProgramId: parent.programId,
          ordinal: ids.length - 1,
          spawnStep: i,
          parentFirstPromptTokens: parent.steps[0].promptTokens,
        });
      }
    });
    assert.deepEqual(
      ids,
      ids.map((_, j) => `${parent.programId}.c${j}`),
    );
    assert.equal(ids.length, subagentCount(parent));
  });

  it("a sub-agent's prompts extend its parent's first prompt token for token", () => {
    const w = preset(7, { maxContextTokens: 131_072 });
    for (const parent of spawning(w, 2)) {
      const parentIds = [...createProgramTokens(parent, w).prompt(0).tokens];
      const shared = parentIds.slice(0, -GEN);
      parent.steps.forEach((_, i) => {
        for (const kid of subagentPlans(parent, i)) {
          const tokens = createProgramTokens(kid, w);
          const conv = createConversation(kid, conversationOptionsFor(w, kid));
          for (let k = 0; k < Math.min(3, kid.steps.length); k++) {
            const ids = tokens.prompt(k).tokens;
            assert.deepEqual(ids.slice(0, shared.length), shared, `${kid.programId} step ${k}`);
            // Exactly the planned size, and what the bench would send renders to the same ids.
            assert.equal(ids.length, kid.steps[k].promptTokens);
            const messages = conv.messagesFor(k);
            assert.deepEqual(chatPromptTokens(messages, { addGenerationPrompt: true }), ids);
            tokens.recordOutput(k, []);
          }
        }
      });
    }
  });

  it("siblings share the parent's prefix and no more: their briefs differ", () => {
    const w = preset(7);
    const parent = spawning(w, 5).find((p) => p.steps.some((s) => (s.spawn?.length ?? 0) >= 2));
    assert.ok(parent);
    const i = parent.steps.findIndex((s) => (s.spawn?.length ?? 0) >= 2);
    const [a, b] = subagentPlans(parent, i).map((k) => [
      ...createProgramTokens(k, w).prompt(0).tokens,
    ]);
    const shared = parent.steps[0].promptTokens - GEN;
    assert.deepEqual(a.slice(0, shared), b.slice(0, shared));
    assert.notDeepEqual(a.slice(shared, shared + 20), b.slice(shared, shared + 20));
  });
});

/** A parent plan with one launching step, built from the property's numbers. */
function treePlan(first: number, briefs: number[][], parentMore: number): ProgramPlan {
  const spawn = briefs.map((growth) => {
    let prompt = first + 4 + growth[0];
    const steps: StepPlan[] = growth.map((g, k) => {
      if (k > 0) prompt += g;
      return { promptTokens: prompt, completionTokens: 3, toolMs: 5 };
    });
    steps[steps.length - 1].toolMs = 0;
    return { steps };
  });
  return {
    programId: "p4",
    index: 4,
    source: "test",
    startOffsetMs: 0,
    steps: [
      { promptTokens: first, completionTokens: 3, toolMs: 7, spawn },
      { promptTokens: first + parentMore, completionTokens: 3, toolMs: 0 },
    ],
  };
}

describe("sub-agent conversations (property)", () => {
  it("every sub-agent's every prompt starts with its parent's first prompt minus the generation prompt", () => {
    const w: Workload = {
      name: "t",
      seed: 1,
      sharedPrefixTokens: 40,
      size: Number.POSITIVE_INFINITY,
      programAt: () => {
        throw new Error("unused");
      },
    };
    fc.assert(
      fc.property(
        fc.integer({ min: 12, max: 120 }),
        // Per sub-agent: its brief, then the growth of each later prompt (≥ an answer's room).
        fc.array(fc.array(fc.integer({ min: 12, max: 60 }), { minLength: 1, maxLength: 4 }), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.integer({ min: 12, max: 50 }),
        (first, briefs, parentMore) => {
          const parent = treePlan(first, briefs, parentMore);
          const shared = [...createProgramTokens(parent, w).prompt(0).tokens].slice(0, -GEN);
          for (const kid of subagentPlans(parent, 0)) {
            const tokens = createProgramTokens(kid, w);
            for (let k = 0; k < kid.steps.length; k++) {
              const ids = tokens.prompt(k).tokens;
              assert.deepEqual(ids.slice(0, shared.length), shared);
              assert.ok(ids.length > shared.length + GEN);
              tokens.recordOutput(k, []);
            }
          }
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
  });
});

describe("sub-agents through the workload's transformations", () => {
  it("the context limit cuts sub-agents, drops one whose first call does not fit, and none on the last step", () => {
    const steps: StepPlan[] = [
      {
        promptTokens: 100,
        completionTokens: 10,
        toolMs: 5,
        spawn: [
          {
            steps: [
              { promptTokens: 150, completionTokens: 10, toolMs: 1 },
              { promptTokens: 995, completionTokens: 10, toolMs: 0 },
            ],
          },
          { steps: [{ promptTokens: 990, completionTokens: 20, toolMs: 0 }] },
        ],
      },
      {
        promptTokens: 200,
        completionTokens: 10,
        toolMs: 5,
        spawn: [{ steps: [{ promptTokens: 150, completionTokens: 10, toolMs: 0 }] }],
      },
      { promptTokens: 2000, completionTokens: 10, toolMs: 0 },
    ];
    const cut = truncateToContext(steps, 1000);
    assert.equal(cut.length, 2);
    assert.deepEqual(cut[0].spawn, [
      { steps: [{ promptTokens: 150, completionTokens: 10, toolMs: 0 }] },
    ]);
    assert.equal(cut[1].spawn, undefined, "the last step kept launches none");
    assert.equal(cut[1].toolMs, 0);
    // Everything fits: the very same array.
    assert.equal(truncateToContext(steps.slice(0, 2), 100_000).length, 2);
    const same = steps.slice(0, 2);
    assert.equal(truncateToContext(same, 100_000), same);
  });

  it("--tool-time-scale scales sub-agents' tool times and the parent's wait after them", () => {
    const w = preset(9);
    const [p] = spawning(w, 1);
    const scaled = scaleToolTimes(w, 3).programAt(p.index);
    p.steps.forEach((s, i) => {
      assert.equal(scaled.steps[i].toolMs, Math.round(s.toolMs * 3));
      s.spawn?.forEach((c, j) => {
        c.steps.forEach((cs, k) => {
          assert.equal(scaled.steps[i].spawn?.[j].steps[k].toolMs, Math.round(cs.toolMs * 3));
        });
      });
    });
  });

  it("--subagent-link off reaches the workload both drivers read; on (the default) leaves it", async () => {
    const setting = WORKLOAD_SETTINGS.subagentLink;
    assert.equal(parseSetting(setting, "off", "--subagent-link"), false);
    assert.equal(parseSetting(setting, "on", "--subagent-link"), true);
    assert.throws(() => parseSetting(setting, "maybe", "--subagent-link"), /on or off/);
    const common = { workload: PRESET, toolTimeScale: 1, unreleased: 0, seed: 1, stagger: 100 };
    const off = workloadSpecOf({ ...common, subagentLink: false });
    assert.equal(off.subagentLink, false);
    assert.equal(workloadSpecOf({ ...common, subagentLink: true }).subagentLink, undefined);
    assert.equal(sendsParentLink(await loadWorkload(off)), false);
    assert.equal(sendsParentLink(createWorkload(off)), false);
    assert.equal(sendsParentLink(await loadWorkload({ ...off, subagentLink: true })), true);
    const mixOff = { ...parseWorkloadArg(`mix:chat=1,${PRESET}=1`), subagentLink: false };
    assert.equal(sendsParentLink(await loadWorkload(mixOff)), false);
    assert.equal((await loadWorkload(mixOff)).subagentsAtOnce, 4);
    assert.equal(
      createWorkload({ kind: "preset", name: "claude-code" }).subagentsAtOnce,
      undefined,
    );
  });
});

describe("existing presets", () => {
  /** sha256 of JSON of the first 200 plans at seed 11, cut at 128 K: as before sub-agents. */
  const DIGESTS: Record<string, string> = {
    "swe-bash": "2ded5c37cd3258b0",
    "swe-bash-frontier": "0a382d22cf9a717c",
    "claude-code": "1ff3e73d7ee8fb2f",
    "search-agent": "7a96ce1ce84d3e1f",
    "llm-tool-agent": "bb19db95e8a75ec2",
    "sandbox-agent": "6a91d2d770637387",
    "openhands-like": "1eb80668033f65d7",
    chat: "b66bc5f1d4706ef8",
  };

  it("give exactly the plans they gave before sub-agents existed, with none", () => {
    for (const [name, digest] of Object.entries(DIGESTS)) {
      const plans = programPlans(
        createWorkload({ kind: "preset", name, seed: 11, maxContextTokens: 131_072 }),
        200,
      );
      const got = createHash("sha256").update(JSON.stringify(plans)).digest("hex").slice(0, 16);
      assert.equal(got, digest, name);
      assert.ok(plans.every((p) => subagentCount(p) === 0));
    }
  });
});
