import assert from "node:assert/strict";
import { test } from "node:test";
import { checkConfigFile, resolveRouterConfig } from "../../src/config/load-config.ts";
import { ConfigError } from "../../src/errors.ts";

const fromYaml = (yaml: string) =>
  resolveRouterConfig({ configFile: "m.yaml", readFile: () => yaml });

test("budgets: a default and per-tenant budgets, wall as a duration", () => {
  const c = fromYaml(`
priority:
  enabled: false
  tenants:
    bots: { max_class: bulk, api_keys: [k1] }
budgets:
  default: { steps: 200, tokens: 5000000, wall: 2h }
  tenants:
    bots: { steps: 50, wall: 30m }
`);
  assert.deepEqual(c.budgets, {
    default: { steps: 200, tokens: 5_000_000, wallMs: 7_200_000 },
    tenants: { bots: { steps: 50, wallMs: 1_800_000 } },
  });
  assert.deepEqual(
    resolveRouterConfig().budgets,
    { default: null, tenants: {} },
    "none by default",
  );
});

test("budgets: bad values and unknown names are errors naming the field", () => {
  const cases: [string, RegExp][] = [
    ["budgets:\n  default: { steps: 0 }\n", /budgets\.default\.steps: must be an integer/],
    [
      "budgets:\n  default: { turns: 3 }\n",
      /budgets\.default\.turns: unknown budget; known: steps, tokens, wall/,
    ],
    ["budgets:\n  default: { wall: soon }\n", /budgets\.default\.wall: must be a duration/],
    ["budgets:\n  limits: {}\n", /budgets\.limits: unknown setting; known: default, tenants/],
    [
      "budgets:\n  tenants:\n    ghost: { steps: 3 }\n",
      /budgets\.tenants\.ghost: no tenant ghost in priority\.tenants/,
    ],
  ];
  for (const [yaml, why] of cases) {
    assert.throws(
      () => fromYaml(yaml),
      (e: unknown) => e instanceof ConfigError && why.test(e.message),
      yaml,
    );
  }
});

test("config check names a budget for an unknown tenant", () => {
  const errors = checkConfigFile("m.yaml", () => "budgets:\n  tenants:\n    ghost: { steps: 3 }\n");
  assert.deepEqual(
    errors.map((e) => e.field),
    ["budgets.tenants.ghost"],
  );
});
