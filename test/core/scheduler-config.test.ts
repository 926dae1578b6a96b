import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerConfig } from "../../src/core/api.ts";
import { createScheduler, DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { ConfigError } from "../../src/errors.ts";

const noop = () => {};
const effects = { dispatch: noop, reject: noop, cancel: noop, log: noop };

test("defaults carry the reference constants (buffer 100, 1800 s pause and idle lease, weight 1)", () => {
  const c = DEFAULT_SCHEDULER_CONFIG;
  assert.deepEqual(
    [c.mode, c.placement, c.bufferPerProgram, c.maxPauseMs, c.idleTimeoutMs, c.actingTokenWeight],
    ["tr", "best-fit", 100, 1_800_000, 1_800_000, 1],
  );
  assert.equal(c.useActingTokenDecay, false);
});

const bad: [keyof SchedulerConfig, unknown][] = [
  ["mode", "fast"],
  ["placement", "first-fit"],
  ["actingTokenWeight", -1],
  ["bufferPerProgram", Number.NaN],
  ["unhealthyAfterFailures", 0],
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
