import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerConfig } from "../../src/core/api.ts";
import { createScheduler, DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { ConfigError } from "../../src/errors.ts";
import { sample } from "./harness.ts";

const noop = () => {};
const effects = { dispatch: noop, reject: noop, cancel: noop, log: noop };

test("defaults: buffer 100, weight 1 and an 1800 s idle lease as ThunderAgent; the bounded preset's waits (ageing 240 s, every pause under 300 s)", () => {
  const c = DEFAULT_SCHEDULER_CONFIG;
  assert.deepEqual(
    [c.mode, c.placement, c.bufferPerProgram, c.maxPauseMs, c.idleTimeoutMs, c.actingTokenWeight],
    ["tr", "best-fit", 100, 300_000, 1_800_000, 1],
  );
  assert.equal(c.useActingTokenDecay, false);
  assert.deepEqual([c.growthHeadroomSteps, c.ageingMs], [4, 240_000]);
});

test("a config without the optional knobs runs with their defaults", () => {
  const { growthHeadroomSteps: _g, ageingMs: _a, ...plain } = DEFAULT_SCHEDULER_CONFIG;
  const s = createScheduler({ config: plain, backends: [{ id: "b0", type: "vllm" }], effects });
  s.handle({ kind: "tick", now: 0, metrics: { b0: sample(100_000) } });
  for (const [i, total] of [1000, 1500].entries()) {
    const id = `a${i}`;
    s.handle({
      kind: "request_arrived",
      now: 0,
      requestId: id,
      programId: "A",
      messageChars: [total * 5],
      final: false,
    });
    const usage = { promptTokens: total, completionTokens: 0, totalTokens: total };
    s.handle({ kind: "request_usage", now: 0, requestId: id, usage });
    s.handle({ kind: "request_finished", now: 0, requestId: id, outcome: "ok" });
  }
  assert.equal(s.snapshot().backends[0].usedTokens, 1500 + 4 * 500, "learned headroom is on");
});

const bad: [keyof SchedulerConfig, unknown][] = [
  ["mode", "fast"],
  ["placement", "first-fit"],
  ["actingTokenWeight", -1],
  ["bufferPerProgram", Number.NaN],
  ["unhealthyAfterFailures", 0],
  ["growthHeadroomSteps", -1],
  ["ageingMs", Number.POSITIVE_INFINITY],
  ["engineOrder", "fastest"],
];
for (const [field, value] of bad) {
  test(`a bad ${field} (${String(value)}) fails with a ConfigError naming the field`, () => {
    const config = { ...DEFAULT_SCHEDULER_CONFIG, [field]: value } as SchedulerConfig;
    assert.throws(
      () => createScheduler({ config, backends: [], effects }),
      (e: unknown) => e instanceof ConfigError && e.field === field,
    );
  });
}

test("a backend declared with an unknown priority polarity fails with a ConfigError on backends", () => {
  const backends = [{ id: "http://a", type: "vllm" as const, priorityScheduling: "up" as never }];
  assert.throws(
    () => createScheduler({ config: DEFAULT_SCHEDULER_CONFIG, backends, effects }),
    (e: unknown) => e instanceof ConfigError && e.field === "backends" && /up/.test(e.message),
  );
});

test("duplicate backend ids fail with a ConfigError on backends", () => {
  const backends = [
    { id: "http://a", type: "vllm" as const },
    { id: "http://a", type: "vllm" as const },
  ];
  assert.throws(
    () => createScheduler({ config: DEFAULT_SCHEDULER_CONFIG, backends, effects }),
    (e: unknown) => e instanceof ConfigError && e.field === "backends",
  );
});
