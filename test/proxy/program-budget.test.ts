import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { RouterBudgets } from "../../src/config/budget-section.ts";
import { MaitredError } from "../../src/errors.ts";
import { createBudgetResolver, parseBudgetHeader } from "../../src/proxy/program-budget.ts";

test("the header reads steps, tokens and wall in any order and spacing", () => {
  assert.deepEqual(parseBudgetHeader("steps=50, tokens=2000000, wall=30m"), {
    steps: 50,
    tokens: 2_000_000,
    wallMs: 1_800_000,
  });
  assert.deepEqual(parseBudgetHeader(" WALL = 90 ,steps=1"), { wallMs: 90_000, steps: 1 });
  assert.deepEqual(parseBudgetHeader("wall=1.5s"), { wallMs: 1500 });
});

test("a malformed header is a 400 naming the header and what is wrong", () => {
  const cases: [string, RegExp][] = [
    ["", /not name=value/],
    ["steps", /not name=value/],
    ["steps=0", /steps must be a whole number/],
    ["steps=1.5", /steps must be a whole number/],
    ["tokens=-3", /tokens must be a whole number/],
    ["tokens=1e6", /tokens must be a whole number/],
    ["wall=soon", /wall must be a duration/],
    ["wall=0", /wall must be a duration > 0/],
    ["steps=2, steps=3", /gives steps twice/],
    ["turns=4", /unknown budget "turns"/],
    ["steps=2,", /not name=value/],
  ];
  for (const [text, why] of cases) {
    assert.throws(
      () => parseBudgetHeader(text),
      (err: unknown) =>
        err instanceof MaitredError &&
        err.status === 400 &&
        err.param === "x-maitred-budget" &&
        why.test(err.message),
      text,
    );
  }
});

const BUDGETS: RouterBudgets = {
  default: { steps: 100, tokens: 1_000_000 },
  tenants: { small: { steps: 10, wallMs: 60_000 }, big: { steps: 1000 } },
};

test("a tenant gets its own budget, another caller the default, each lowered by the header", () => {
  const r = createBudgetResolver(BUDGETS, false);
  assert.deepEqual(r.budgetOf("small", {}), { steps: 10, wallMs: 60_000 });
  assert.deepEqual(r.budgetOf("big", {}), { steps: 1000 });
  assert.deepEqual(r.budgetOf("other", {}), BUDGETS.default);
  assert.deepEqual(r.budgetOf(null, {}), BUDGETS.default);
  assert.deepEqual(r.budgetOf("big", { "x-maitred-budget": "steps=5000, wall=1h" }), {
    steps: 1000,
    wallMs: 3_600_000,
  });
  assert.equal(
    createBudgetResolver({ default: null, tenants: {} }, false).budgetOf(null, {}),
    undefined,
  );
});

test("with API keys mapped, a caller without one gets no more than any tenant", () => {
  const r = createBudgetResolver(BUDGETS, true);
  assert.deepEqual(r.budgetOf(null, {}), { steps: 10, tokens: 1_000_000, wallMs: 60_000 });
  assert.deepEqual(r.budgetOf("big", {}), { steps: 1000 }, "a named tenant keeps its own");
});

test("property: the header never raises any budget", () => {
  const limit = fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined });
  fc.assert(
    fc.property(limit, limit, limit, limit, (cs, ct, hs, ht) => {
      const configured = {
        ...(cs === undefined ? {} : { steps: cs }),
        ...(ct === undefined ? {} : { tokens: ct }),
      };
      const parts = [
        ...(hs === undefined ? [] : [`steps=${hs}`]),
        ...(ht === undefined ? [] : [`tokens=${ht}`]),
      ];
      const r = createBudgetResolver({ default: configured, tenants: {} }, false);
      const headers = parts.length === 0 ? {} : { "x-maitred-budget": parts.join(",") };
      const got = r.budgetOf(null, headers) ?? {};
      for (const kind of ["steps", "tokens"] as const) {
        if (configured[kind] !== undefined) assert.ok((got[kind] as number) <= configured[kind]);
      }
    }),
    { verbose: 1 },
  );
});
