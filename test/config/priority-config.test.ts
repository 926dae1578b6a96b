import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { resolveRouterConfig } from "../../src/config/load-config.ts";
import { schedulerConfigOf } from "../../src/config/scheduler-settings.ts";
import { DEFAULT_CLASS_SETTINGS, resolvePriorityConfig } from "../../src/core/api.ts";
import { createScheduler } from "../../src/core/scheduler.ts";
import { ConfigError } from "../../src/errors.ts";

const yaml = (text: string) => ({ configFile: "/c.yaml", readFile: () => text });

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `want ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail("want a ConfigError, got none");
}

const SECTION = `
priority:
  queue_policy: sjf
  priority_policy: slo-based
  age_weight: 2
  default_max_class: default
  classes:
    interactive:
      reserved_share: 0.1
      queue_depth: 8
      queue_timeout: 2s
      starvation: 500ms
      preempt: false
    bulk: { queue_depth: 0 }
  tenants:
    ops: { max_class: system, api_keys: [sk-ops] }
    free:
      max_class: bulk
      api_keys: [sk-free-1, sk-free-2]
`;

test("priorities are off by default and the core gets no priority section", () => {
  const c = resolveRouterConfig();
  assert.equal(c.priority.enabled, false);
  assert.equal(c.queuePolicy, null);
  assert.equal("priority" in schedulerConfigOf(c), false, "absent = tr exactly as before");
});

test("--priority turns on the built-in class defaults", () => {
  const c = resolveRouterConfig({ flags: { priority: true } });
  assert.equal(c.priority.enabled, true);
  assert.deepEqual(schedulerConfigOf(c).priority, {});
  assert.equal(c.priority.defaultMaxClass, "interactive");
  assert.equal(c.priority.trustTenantHeader, false, "a header names no tenant unless trusted");
  assert.equal(c.priority.anonymousMaxClass, "default");
});

test("environment twins switch priorities and pick the policies", () => {
  const c = resolveRouterConfig({
    env: {
      MAITRED_PRIORITY: "true",
      MAITRED_QUEUE_POLICY: "priority-fcfs",
      MAITRED_PRIORITY_POLICY: "slo-based",
    },
  });
  assert.equal(c.priority.enabled, true);
  assert.deepEqual(schedulerConfigOf(c).priority, {
    queuePolicy: "priority-fcfs",
    priorityPolicy: "slo-based",
  });
});

test("a priority section in the file turns priorities on with its classes, tenants and keys", () => {
  const c = resolveRouterConfig(yaml(SECTION));
  assert.equal(c.priority.enabled, true);
  assert.deepEqual(c.priority.tenants, { ops: "system", free: "bulk" });
  assert.deepEqual(c.priority.apiKeys, {
    "sk-ops": "ops",
    "sk-free-1": "free",
    "sk-free-2": "free",
  });
  assert.equal(c.priority.defaultMaxClass, "default");
  const core = schedulerConfigOf(c).priority;
  assert.deepEqual(core, {
    queuePolicy: "sjf",
    priorityPolicy: "slo-based",
    ageWeightPerMs: 0.002,
    classes: {
      interactive: {
        reservedShare: 0.1,
        queueDepth: 8,
        queueTimeoutMs: 2000,
        starvationMs: 500,
        preempt: false,
      },
      bulk: { queueDepth: 0 },
    },
  });
  const resolved = resolvePriorityConfig(core ?? {});
  assert.ok(resolved.ok, "the core accepts what the file produced");
  assert.equal(
    resolved.config.classes[3].queueTimeoutMs,
    DEFAULT_CLASS_SETTINGS.bulk.queueTimeoutMs,
  );
});

test("an empty priority: section means the defaults, and enabled: false keeps it off", () => {
  assert.equal(resolveRouterConfig(yaml("priority:\n")).priority.enabled, true);
  assert.equal(resolveRouterConfig(yaml("priority: true\n")).priority.enabled, true);
  const off = resolveRouterConfig(
    yaml("priority:\n  enabled: false\n  tenants: { a: { max_class: bulk } }\n"),
  );
  assert.equal(off.priority.enabled, false);
  assert.equal("priority" in schedulerConfigOf(off), false);
});

test("flags and env switch a file's section without replacing it, and the policy flags win", () => {
  const off = resolveRouterConfig({ ...yaml(SECTION), env: { MAITRED_PRIORITY: "off" } });
  assert.equal(off.priority.enabled, false, "env beats the file");
  assert.deepEqual(off.priority.tenants, { ops: "system", free: "bulk" }, "section kept");
  const on = resolveRouterConfig({
    ...yaml(SECTION),
    env: { MAITRED_PRIORITY: "off" },
    flags: { priority: true, "queue-policy": "fcfs", "priority-policy": "constant" },
  });
  assert.equal(on.priority.enabled, true, "the flag beats env");
  const core = schedulerConfigOf(on).priority;
  assert.equal(core?.queuePolicy, "fcfs");
  assert.equal(core?.priorityPolicy, "constant");
  assert.equal(core?.classes?.interactive?.queueDepth, 8);
});

test("malformed priority settings stop startup naming the field", () => {
  const cases: Array<[string, string]> = [
    ["priority: 3\n", "priority"],
    ["priority: [a]\n", "priority"],
    ["priority:\n  colour: red\n", "priority.colour"],
    ["priority:\n  queue_policy: reverse-priority\n", "priority.queue_policy"],
    ["priority:\n  priority_policy: inverted-slo\n", "priority.priority_policy"],
    ["priority:\n  default_max_class: gold\n", "priority.default_max_class"],
    ["priority:\n  classes:\n    vip: {}\n", "priority.classes.vip"],
    ["priority:\n  classes: [system]\n", "priority.classes"],
    ["priority:\n  classes:\n    bulk: { queue_depth: -1 }\n", "priority.classes.bulk.queue_depth"],
    [
      "priority:\n  classes:\n    bulk: { queue_depth: 1.5 }\n",
      "priority.classes.bulk.queue_depth",
    ],
    [
      "priority:\n  classes:\n    bulk: { queue_timeout: soon }\n",
      "priority.classes.bulk.queue_timeout",
    ],
    [
      "priority:\n  classes:\n    bulk: { queue_timeout: 0 }\n",
      "priority.classes.bulk.queue_timeout",
    ],
    [
      "priority:\n  classes:\n    bulk: { reserved_share: -0.1 }\n",
      "priority.classes.bulk.reserved_share",
    ],
    ["priority:\n  classes:\n    bulk: { preempt: maybe }\n", "priority.classes.bulk.preempt"],
    ["priority:\n  classes:\n    bulk: { share: 1 }\n", "priority.classes.bulk.share"],
    ["priority:\n  tenants:\n    a: { max_class: gold }\n", "priority.tenants.a.max_class"],
    ["priority:\n  tenants:\n    a: {}\n", "priority.tenants.a.max_class"],
    [
      "priority:\n  tenants:\n    a: { max_class: bulk, api_keys: 3 }\n",
      "priority.tenants.a.api_keys",
    ],
    ["priority:\n  tenants:\n    a: bulk\n", "priority.tenants.a"],
    ["priority:\n  anonymous_max_class: gold\n", "priority.anonymous_max_class"],
  ];
  for (const [text, field] of cases) {
    const err = configErrorOf(() => resolveRouterConfig(yaml(text)));
    assert.equal(err.field, field, `${JSON.stringify(text)}: got ${err.field}, want ${field}`);
  }
  for (const [flags, field] of [
    [{ "queue-policy": "lifo" }, "queue-policy"],
    [{ "priority-policy": "random" }, "priority-policy"],
  ] as const) {
    assert.equal(configErrorOf(() => resolveRouterConfig({ flags })).field, field);
  }
  assert.equal(
    configErrorOf(() => resolveRouterConfig({ env: { MAITRED_PRIORITY: "sometimes" } })).field,
    "priority",
  );
});

test("an API key given to two tenants is a config error that does not print the key", () => {
  const err = configErrorOf(() =>
    resolveRouterConfig(
      yaml(
        "priority:\n  tenants:\n    a: { max_class: bulk, api_keys: [sk-secret] }\n    b: { max_class: system, api_keys: [sk-secret] }\n",
      ),
    ),
  );
  assert.equal(err.field, "priority.tenants.b.api_keys");
  assert.doesNotMatch(err.message, /sk-secret/);
});

test("reservations that do not fit pass the file check; the core logs them and runs without priorities", () => {
  const c = resolveRouterConfig(
    yaml(
      "priority:\n  classes:\n    system: { reserved_share: 0.7 }\n    interactive: { reserved_share: 0.6 }\n",
    ),
  );
  assert.equal(c.priority.enabled, true);
  const logs: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const scheduler = createScheduler({
    config: schedulerConfigOf(c),
    backends: [{ id: "http://b0", type: "vllm" }],
    effects: {
      dispatch() {},
      reject() {},
      cancel() {},
      log: (level, msg, fields) => logs.push({ level, msg, fields }),
    },
  });
  assert.equal(scheduler.prioritiesEnabled, false, "fail-safe: routing continues without them");
  const error = logs.find((l) => l.level === "error");
  assert.ok(error, `want an error log, got ${JSON.stringify(logs)}`);
  assert.match(JSON.stringify(error.fields), /reservedShare sums to 1\.(3|29)/);
});

test("the commented priority section of the example config, uncommented, is the built-in defaults", () => {
  const path = new URL("../../config/maitred.example.yaml", import.meta.url).pathname;
  const lines = readFileSync(path, "utf8").split("\n");
  const start = lines.indexOf("# priority:");
  assert.ok(start >= 0, "the example has a commented priority section");
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith("# ") && !line.startsWith("#  ")) break;
    block.push(line.slice(2));
  }
  const c = resolveRouterConfig(yaml(block.join("\n")));
  assert.equal(c.priority.enabled, true);
  assert.deepEqual(c.priority.tenants, { "control-plane": "system", "free-tier": "bulk" });
  const resolved = resolvePriorityConfig(schedulerConfigOf(c).priority ?? {});
  assert.ok(resolved.ok);
  assert.deepEqual(
    resolved.config.classes,
    [
      DEFAULT_CLASS_SETTINGS.system,
      DEFAULT_CLASS_SETTINGS.interactive,
      DEFAULT_CLASS_SETTINGS.default,
      DEFAULT_CLASS_SETTINGS.bulk,
    ],
    "the values shown are the defaults",
  );
  assert.equal(resolved.config.queuePolicy, "ta");
  assert.equal(resolved.config.priorityPolicy, "constant");
});
