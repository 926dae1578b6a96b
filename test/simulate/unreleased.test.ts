import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveSimulateFlags } from "../../src/simulate/simulate-options.ts";
import { simulateSweep } from "../../src/simulate/simulate-sweep.ts";
import { loadWorkload, parseWorkloadArg } from "../../src/workload/load-workload.ts";
import { drawUnreleased, markUnreleased } from "../../src/workload/unreleased.ts";
import { createWorkload } from "../../src/workload/workload.ts";

test("the unreleased draw is seeded per program and follows its share", () => {
  const n = 4000;
  const count = (share: number, seed: number) =>
    Array.from({ length: n }, (_, i) => drawUnreleased(share, seed, i)).filter(Boolean).length;
  assert.equal(count(0, 1), 0);
  assert.equal(count(1, 1), n);
  const third = count(0.3, 1);
  assert.ok(third > 0.27 * n && third < 0.33 * n, `share 0.3 marked ${third} of ${n}`);
  const a = Array.from({ length: 50 }, (_, i) => drawUnreleased(0.5, 1, i));
  assert.deepEqual(
    a,
    Array.from({ length: 50 }, (_, i) => drawUnreleased(0.5, 1, i)),
  );
  assert.notDeepEqual(
    a,
    Array.from({ length: 50 }, (_, i) => drawUnreleased(0.5, 2, i)),
  );
});

test("a mix marks the same programs whichever way a driver draws them", async () => {
  const spec = { ...parseWorkloadArg("mix:chat=0.5,swe-bash=0.5", { seed: 4 }), unreleased: 0.5 };
  const w = await loadWorkload(spec);
  assert.ok(w.mix !== undefined);
  const marks = Array.from({ length: 40 }, (_, i) => w.programAt(i).unreleased === true);
  assert.ok(marks.some(Boolean) && !marks.every(Boolean), "share 0.5 marks some, not all");
  for (let i = 0; i < 40; i++) {
    assert.equal(w.mix.programOf(i % 2, i, i).unreleased === true, marks[i], `program ${i}`);
  }
  // Share 0 leaves the workload as it is.
  const plain = createWorkload({ kind: "preset", name: "chat", seed: 4 });
  assert.equal(markUnreleased(plain, 0), plain);
});

/**
 * The small-backend case in `maitred simulate`: one backend of 2,400 tokens of KV (no two
 * chat sessions fit with their learned headroom), five sessions, shipped defaults. When no
 * client ever releases its finished programs, they stay booked in the router until the idle
 * timeout (30 min, longer than the run); the sessions still waiting must not be held behind
 * them: they run as many steps as when every client releases, and none waits past 3 ticks.
 * (What keeps them going is the idle seat, with or without lending: a backend with nothing in
 * flight takes the next waiting program. Without it, both runs stall and the hold bound fails.)
 */
test("programs whose clients never release them do not hold a small backend from waiting work", async () => {
  const run = async (unreleased: string) => {
    const o = resolveSimulateFlags({
      router: "tr",
      workload: "chat",
      concurrency: "5",
      numBackends: "1",
      numGpuBlocks: "150",
      unreleased,
      warmup: "0s",
      duration: "10m",
      seed: "1",
    });
    const [report] = simulateSweep(o, await loadWorkload(o.workload));
    return report;
  };
  const released = await run("0");
  const kept = await run("1");
  assert.ok(released.scheduler.releases > 0, "with releases on, finished programs are released");
  // No client released and the idle timeout is 30 min: every release is the likely-done rule's.
  assert.ok(kept.scheduler.likelyDoneReleases > 0, "final answers mark programs likely done");
  assert.equal(kept.scheduler.releases, kept.scheduler.likelyDoneReleases);
  assert.equal(kept.unreleased_share, 1, "the report says releases were off");
  assert.equal(released.unreleased_share, undefined);
  assert.ok(
    kept.steps_completed >= 0.95 * released.steps_completed,
    `${kept.steps_completed} steps without releases, ${released.steps_completed} with`,
  );
  const tick = kept.simulated.scheduler_interval_ms;
  assert.ok(
    (kept.paused_ms.per_step_max ?? 0) <= 3 * tick,
    `longest hold ${kept.paused_ms.per_step_max} ms`,
  );
  assert.ok((kept.still_parked_max_ms ?? 0) <= 3 * tick, `${kept.still_parked_max_ms} ms parked`);
});
