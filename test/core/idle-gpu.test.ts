import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler-config.ts";
import { createHarness } from "./harness.ts";

/**
 * A new user's first try, on the shipped defaults: five agents of three steps on one small
 * backend (2,400 tokens); one agent finishes its steps and is never released. The engine is
 * simulated just enough: a dispatched request runs for 2 s (first token at once, usage at the
 * end), each tool call takes 1 s, and every 5 s tick reports what really runs (KV in use =
 * the contexts of the requests in flight). Every step must be done within a few ticks, never
 * left waiting for the 900 s ageing bound while the engine sits idle.
 */

const CAPACITY = 2400;
const STEPS = 3;
const AGENTS = ["a", "b", "c", "d", "e"];

test("a finished agent that is never released does not keep the others parked on an idle GPU", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: CAPACITY,
    config: { ...DEFAULT_SCHEDULER_CONFIG },
  });
  // Each step grows a context by 350 tokens: the learned headroom (4 steps of growth) makes
  // any two agents too big for the backend together, so the agents run one at a time.
  const contextOf = (step: number) => 300 + 350 * step;
  type Live = { agent: string; step: number; id: string; startedAt: number | null };
  const running = new Map<string, Live>();
  const toolUntil = new Map<string, number>();
  const stepsDone = new Map(AGENTS.map((a) => [a, 0]));
  let seq = 0;
  const send = (agent: string) => {
    const step = stepsDone.get(agent) as number;
    const id = `${agent}${step}-${++seq}`;
    running.set(id, { agent, step, id, startedAt: null });
    h.arrive(id, agent, contextOf(step));
  };
  for (const a of AGENTS) send(a);
  let finishedAt = -1;
  for (let t = 0; t < 900 && finishedAt < 0; t++) {
    h.advance(1000);
    for (const r of running.values()) {
      if (r.startedAt === null && h.dispatchOf(r.id) !== undefined) {
        r.startedAt = h.now;
        h.firstToken(r.id);
      }
      if (r.startedAt !== null && h.now - r.startedAt >= 2000) {
        h.usage(r.id, contextOf(r.step) + 50, contextOf(r.step));
        h.finish(r.id);
        running.delete(r.id);
        stepsDone.set(r.agent, r.step + 1);
        if (r.step + 1 < STEPS) toolUntil.set(r.agent, h.now + 1000);
      }
    }
    for (const [agent, until] of toolUntil) {
      if (h.now >= until) {
        toolUntil.delete(agent);
        send(agent);
      }
    }
    if (t % 5 === 4) {
      let kv = 0;
      let inFlight = 0;
      for (const r of running.values()) {
        if (r.startedAt === null) continue;
        inFlight++;
        kv += contextOf(r.step);
      }
      h.tick({ b0: h.sample(CAPACITY, { kvUsage: kv / CAPACITY, running: inFlight, waiting: 0 }) });
    }
    if ([...stepsDone.values()].every((n) => n === STEPS)) finishedAt = t;
  }
  assert.ok(
    finishedAt >= 0 && finishedAt < 120,
    `all ${AGENTS.length * STEPS} steps done after ${finishedAt} s (want within a few ticks, never the 900 s ageing bound)`,
  );
});
