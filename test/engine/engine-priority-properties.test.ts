import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { SimulatedEngine } from "../../src/engine/engine.ts";
import type { EngineConfigOverrides } from "../../src/engine/timing.ts";
import type { PriorityScheduling, StepResult } from "../../src/engine/types.ts";
import { hostTier, request, smallEngine, tokens } from "./engine-helpers.ts";

/** Seeded: FC_SEED replays a failure (fast-check prints the seed of any failing run). */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
/**
 * Each property runs on a fixed seed too, whose workloads are known to preempt: a random seed
 * alone may draw none that do (about one seed in 200), and a property no case exercised would
 * pass for nothing.
 */
const COVERING_SEED = 1;
const seeds = [COVERING_SEED, SEED];

interface Req {
  shared: boolean;
  own: number;
  maxTokens: number;
  /** Steps to wait after the previous arrival. */
  gap: number;
  priority: number | undefined;
}

const reqArb = fc.record({
  shared: fc.boolean(),
  own: fc.integer({ min: 1, max: 100 }),
  maxTokens: fc.integer({ min: 1, max: 30 }),
  gap: fc.integer({ min: 0, max: 3 }),
  priority: fc.option(fc.integer({ min: -30, max: 30 }), { nil: undefined }),
});
const workloadArb = fc.array(reqArb, { minLength: 1, maxLength: 16 });

/** A tight cache (23 usable blocks), small steps, so requests queue and preempt. */
const PRESSURE = { numGpuBlocks: 24, maxModelLen: 256, maxNumBatchedTokens: 64, maxNumSeqs: 6 };

interface Observed {
  step: StepResult;
  runningBefore: string[];
  runningAfter: string[];
  waitingAfter: string[];
  preemptedNow: number;
}

/** Feed `reqs` (arrival i after its gap in steps) and step until idle; `see` gets every step. */
function drive(engine: SimulatedEngine, reqs: readonly Req[], see: (o: Observed) => void) {
  const shared = tokens(48, 7);
  let now = 0;
  let next = 0;
  let wait = reqs[0].gap;
  let finished = 0;
  for (let guard = 0; guard < 20_000; guard++) {
    while (next < reqs.length && wait <= 0) {
      const q = reqs[next];
      const own = tokens(q.own, 10_000 * (next + 1));
      const prompt = q.shared ? [...shared, ...own] : own;
      const priority = q.priority === undefined ? {} : { priority: q.priority };
      engine.add(
        request(`r${next}`, prompt, { maxTokens: q.maxTokens, arrivalTime: now, ...priority }),
      );
      next++;
      wait = next < reqs.length ? reqs[next].gap : 0;
    }
    wait--;
    const runningBefore = engine.inspect().running.map((v) => v.id);
    const preemptions = engine.stats().numPreemptions;
    const step = engine.step(now);
    if (step === null) {
      if (next >= reqs.length) break;
      now += 0.01;
      continue;
    }
    now = step.startTime + step.duration;
    finished += step.outputs.filter((o) => o.finishReason !== undefined).length;
    const v = engine.inspect();
    assert.equal(v.numFreeBlocks + v.numReferencedBlocks, PRESSURE.numGpuBlocks - 1);
    see({
      step,
      runningBefore,
      runningAfter: v.running.map((r) => r.id),
      waitingAfter: v.waiting.map((r) => r.id),
      preemptedNow: engine.stats().numPreemptions - preemptions,
    });
  }
  assert.equal(finished, reqs.length, "every request finishes: no one starves forever");
  assert.equal(engine.inspect().numReferencedBlocks, 0);
}

const finishedIn = (o: Observed) =>
  new Set(o.step.outputs.filter((x) => x.finishReason !== undefined).map((x) => x.id));

/** Requests that left the running list in a step without finishing: its victims. */
function victims(o: Observed): string[] {
  const done = finishedIn(o);
  const after = new Set(o.runningAfter);
  return o.runningBefore.filter((id) => !after.has(id) && !done.has(id));
}

/** Requests that started running in a step (some may have finished in it too). */
function admitted(o: Observed): string[] {
  const before = new Set(o.runningBefore);
  return [...o.runningAfter, ...finishedIn(o)].filter((id) => !before.has(id));
}

const hostArb = fc.constantFrom<EngineConfigOverrides>({}, hostTier(16));

describe("priority scheduling properties", () => {
  it("first come, first served schedules the same whatever the priority fields say", () => {
    for (const seed of seeds)
      fc.assert(
        fc.property(workloadArb, hostArb, (reqs, host) => {
          const trace = (rs: readonly Req[]) => {
            const steps: StepResult[] = [];
            drive(smallEngine({ ...PRESSURE, ...host }), rs, (o) => steps.push(o.step));
            return steps;
          };
          const plain = reqs.map((r) => ({ ...r, priority: undefined }));
          assert.deepEqual(trace(reqs), trace(plain));
        }),
        { seed, numRuns: 8 },
      );
  });

  it("vLLM: the queue stays in (priority, arrival) order; a preempting step admits nobody and its victims are the worst running", () => {
    let preemptingSteps = 0;
    for (const seed of seeds)
      fc.assert(
        fc.property(workloadArb, hostArb, (reqs, host) => {
          const engine = smallEngine({
            ...PRESSURE,
            ...host,
            priorityScheduling: { rules: "vllm" },
          });
          const index = (id: string) => Number(id.slice(1));
          const arrival = new Map<string, number>();
          // (priority, arrival) as vLLM compares them; ties are in the order taken in.
          const key = (id: string): [number, number, number] => [
            reqs[index(id)].priority ?? 0,
            arrival.get(id)!,
            index(id),
          ];
          const cmp = (a: string, b: string) => {
            const [x, y] = [key(a), key(b)];
            return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
          };
          drive(engine, reqs, (o) => {
            for (const id of [...o.runningAfter, ...o.waitingAfter])
              if (!arrival.has(id)) arrival.set(id, o.step.startTime);
            for (let i = 1; i < o.waitingAfter.length; i++)
              assert.ok(cmp(o.waitingAfter[i - 1], o.waitingAfter[i]) < 0, "waiting in key order");
            if (o.preemptedNow === 0) return;
            preemptingSteps++;
            assert.deepEqual(admitted(o), [], "no admission after a preemption");
            const out = victims(o);
            assert.equal(out.length, o.preemptedNow);
            // Each victim was the largest (priority, arrival) running when it was taken.
            for (const v of out)
              for (const s of o.runningAfter) {
                const [kv, ks] = [key(v), key(s)];
                assert.ok(kv[0] > ks[0] || (kv[0] === ks[0] && kv[1] >= ks[1]), `${v} beats ${s}`);
              }
          });
        }),
        { seed, numRuns: 12 },
      );
    assert.ok(preemptingSteps > 0, "the workloads preempt at all");
  });

  it("SGLang: a waiting request only preempts requests worse than it by more than the threshold", () => {
    let preemptingAdmissions = 0;
    for (const seed of seeds)
      fc.assert(
        fc.property(
          workloadArb,
          hostArb,
          fc.integer({ min: 0, max: 12 }),
          fc.boolean(),
          (reqs, host, threshold, lowValuesFirst) => {
            const p: PriorityScheduling = {
              rules: "sglang",
              preemptionThreshold: threshold,
              lowValuesFirst,
            };
            const engine = smallEngine({ ...PRESSURE, ...host, priorityScheduling: p });
            // SGLang's priority as one number, lower served first; no priority is the lowest.
            const rank = (id: string) => {
              const v = reqs[Number(id.slice(1))].priority;
              if (v === undefined) return Number.POSITIVE_INFINITY;
              return lowValuesFirst ? v : -v;
            };
            drive(engine, reqs, (o) => {
              if (o.preemptedNow === 0) return;
              // A step whose running requests ran out of KV admits nobody: one that admitted
              // preempted for a waiting request, admitted in it.
              const started = admitted(o);
              if (started.length === 0) return;
              preemptingAdmissions++;
              const best = Math.min(...started.map(rank));
              for (const v of victims(o))
                assert.ok(
                  rank(v) - best > threshold,
                  `${v} preempted for a gap of ${rank(v) - best}`,
                );
            });
          },
        ),
        { seed, numRuns: 15 },
      );
    assert.ok(preemptingAdmissions > 0, "waiting requests preempt at all");
  });
});
