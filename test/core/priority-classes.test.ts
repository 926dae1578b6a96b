import assert from "node:assert/strict";
import { test } from "node:test";
import {
  clampClass,
  DEFAULT_CLASS_SETTINGS,
  PRIORITY_POLICIES,
  parsePriorityClass,
  QUEUE_POLICIES,
  resolvePriorityConfig,
  resolveRequestClass,
} from "../../src/core/api.ts";
import { AGEING_MS, MAX_PAUSE_MS } from "../../src/core/scheduler-config.ts";
import { toErrorResponse } from "../../src/errors.ts";

test("class names parse case-insensitively and trimmed; anything else is null", () => {
  assert.equal(parsePriorityClass(" Interactive "), "interactive");
  assert.equal(parsePriorityClass("BULK"), "bulk");
  assert.equal(parsePriorityClass("urgent"), null);
  assert.equal(parsePriorityClass(3), null);
});

test("clamp: a header can only lower a class to the tenant's ceiling, never raise it", () => {
  assert.equal(clampClass("system", "default"), "default", "above the ceiling: lowered");
  assert.equal(clampClass("bulk", "interactive"), "bulk", "below the ceiling: kept, not raised");
  assert.equal(clampClass("interactive", "interactive"), "interactive");
});

test("request class: no header is default, clamped to the tenant and flagged as clamped", () => {
  assert.deepEqual(resolveRequestClass(undefined), {
    ok: true,
    priorityClass: "default",
    clamped: false,
    requested: "default",
  });
  const free = resolveRequestClass("system", "bulk");
  assert.deepEqual(free, { ok: true, priorityClass: "bulk", clamped: true, requested: "system" });
  const blank = resolveRequestClass("  ", "interactive");
  assert.equal(blank.ok && blank.priorityClass, "default");
});

test("request class: an unknown name is a 400 in the OpenAI envelope naming the field", () => {
  const r = resolveRequestClass("vip", "system", "x-priority");
  assert.equal(r.ok, false);
  if (r.ok) return;
  const res = toErrorResponse(r.error);
  assert.equal(res.status, 400);
  assert.equal(res.body.error.param, "x-priority");
  assert.match(res.body.error.message, /vip/);
});

test("config: {} takes the built-in defaults: shorter queues and timeouts up, tr's bounds below", () => {
  const r = resolvePriorityConfig({});
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.config.queuePolicy, "ta");
  assert.equal(r.config.priorityPolicy, "constant");
  const [system, interactive, dflt, bulk] = r.config.classes;
  assert.deepEqual(system, DEFAULT_CLASS_SETTINGS.system);
  assert.ok(interactive.queueDepth < dflt.queueDepth && dflt.queueDepth < bulk.queueDepth);
  assert.ok(interactive.queueTimeoutMs < dflt.queueTimeoutMs);
  assert.ok(interactive.starvationMs < dflt.starvationMs);
  // default and bulk wait as tr's pauses do: starved at the ageing bound, timed out at the
  // forced resume (src/core/priority/priority-config.ts, src/core/README.md "Evidence").
  for (const c of [dflt, bulk]) {
    assert.equal(c.starvationMs, AGEING_MS);
    assert.equal(c.queueTimeoutMs, MAX_PAUSE_MS);
  }
  assert.deepEqual(
    r.config.classes.map((c) => c.preempt),
    [true, true, false, false],
    "preemption on by default for system and interactive only",
  );
});

test("config: reservations that do not fit, bad numbers and unknown names are all reported", () => {
  const r = resolvePriorityConfig({
    classes: {
      system: { reservedShare: 0.6 },
      interactive: { reservedShare: 0.5, queueDepth: -1 },
      // @ts-expect-error: an unknown class from a config file
      vip: { reservedShare: 0.1 },
    },
    queuePolicy: "lifo" as never,
  });
  assert.equal(r.ok, false);
  if (r.ok) return;
  const text = r.errors.join("\n");
  assert.match(text, /sums to 1\.1/);
  assert.match(text, /interactive\.queueDepth/);
  assert.match(text, /classes\.vip: unknown class/);
  assert.match(text, /queuePolicy/);
});

test("the pathological policies are accepted by the core but not offered to users", () => {
  assert.deepEqual([...QUEUE_POLICIES], ["ta", "fcfs", "priority-fcfs", "sjf"]);
  assert.deepEqual([...PRIORITY_POLICIES], ["constant", "slo-based"]);
  const r = resolvePriorityConfig({
    queuePolicy: "reverse-priority",
    priorityPolicy: "inverted-slo",
  });
  assert.equal(r.ok, true);
});

test("config: a negative reservation is refused", () => {
  const r = resolvePriorityConfig({ classes: { bulk: { reservedShare: -0.1 } } });
  assert.equal(r.ok, false);
});
