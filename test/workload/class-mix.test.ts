import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../src/errors.ts";
import { drawClass, parseClassMix } from "../../src/workload/class-mix.ts";
import { createWorkload, programPlans } from "../../src/workload/workload.ts";

const INTERACTIVE_BULK = parseClassMix("interactive=0.2,bulk=0.8");

describe("--class-mix", () => {
  it("parses class=weight lists, case-insensitive names", () => {
    assert.deepEqual(parseClassMix(" Interactive=1, bulk=3 "), [
      { priorityClass: "interactive", weight: 1 },
      { priorityClass: "bulk", weight: 3 },
    ]);
  });

  it("rejects unknown classes, bad weights, repeats and empty lists, naming the flag", () => {
    for (const bad of ["vip=1", "bulk=0", "bulk=-1", "bulk=x", "bulk", "bulk=1,bulk=2", ""]) {
      assert.throws(
        () => parseClassMix(bad),
        (e: unknown) => e instanceof ConfigError && e.field === "class-mix",
        `want a ConfigError for ${JSON.stringify(bad)}`,
      );
    }
  });

  it("assigns classes in the given proportions, deterministically per seed", () => {
    const classes = Array.from({ length: 4000 }, (_, i) => drawClass(INTERACTIVE_BULK, 7, i));
    const interactive = classes.filter((c) => c === "interactive").length / classes.length;
    assert.ok(Math.abs(interactive - 0.2) < 0.02, `got ${interactive} interactive, want 0.2`);
    const again = Array.from({ length: 4000 }, (_, i) => drawClass(INTERACTIVE_BULK, 7, i));
    assert.deepEqual(again, classes, "same seed, same classes");
    const other = Array.from({ length: 4000 }, (_, i) => drawClass(INTERACTIVE_BULK, 8, i));
    assert.notDeepEqual(other, classes, "another seed, other classes");
  });

  it("a workload with a class mix gives each plan its class; program i never depends on others", () => {
    const spec = { kind: "preset", name: "swe-bash", seed: 4, classMix: INTERACTIVE_BULK } as const;
    const plans = programPlans(createWorkload(spec), 50);
    assert.ok(plans.every((p) => p.priorityClass === "interactive" || p.priorityClass === "bulk"));
    assert.deepEqual(
      createWorkload(spec).programAt(37),
      plans[37],
      "program 37 alone equals program 37 of a sequence",
    );
    const plain = createWorkload({ kind: "preset", name: "swe-bash", seed: 4 }).programAt(37);
    assert.equal(plain.priorityClass, undefined, "no class mix: no class");
    assert.deepEqual(plain.steps, plans[37].steps, "the class does not change the program");
  });
});
