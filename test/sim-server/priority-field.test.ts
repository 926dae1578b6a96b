import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createEngine } from "../../src/engine/engine.ts";
import { prioritySchedulingOf } from "../../src/engine/queue-order.ts";
import type { EngineRequest } from "../../src/engine/types.ts";
import { createManualClock } from "../../src/sim-server/clock.ts";
import { createEngineDriver } from "../../src/sim-server/engine-driver.ts";
import {
  type RawSimBackendOptions,
  resolveSimBackendOptions,
  simBlockSchema,
} from "../../src/sim-server/options.ts";
import { buildSimApp } from "../../src/sim-server/sim-app.ts";
import { simEngine } from "../../src/sim-server/start-sim-backend.ts";
import { readJson, TEST_MODEL } from "./helpers.ts";

/**
 * A backend on a manual clock that never moves: requests reach the engine and wait there, so
 * what each engine request carries and the order of the waiting queue can be read at leisure.
 * Its engine takes the priority scheduling its options say.
 */
function setup(raw: RawSimBackendOptions = {}) {
  const options = resolveSimBackendOptions({
    model: TEST_MODEL,
    numGpuBlocks: 256,
    maxModelLen: 2048,
    ...raw,
  });
  // The engine `maitred sim-backend` builds from these options, rebuilt here only to watch
  // what reaches it.
  const engine = createEngine(simEngine(options).config);
  const seen: EngineRequest[] = [];
  const add = (r: EngineRequest) => {
    seen.push(r);
    engine.add(r);
  };
  const driver = createEngineDriver({
    engine: { ...engine, add },
    clock: createManualClock(),
    timeScale: 1,
  });
  const app = buildSimApp({ options, driver, startedAt: 1 });
  return { app, engine, seen };
}

const ROUTES = {
  chat: ["/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }],
  completions: ["/v1/completions", { prompt: "hi" }],
  responses: ["/v1/responses", { input: "hi" }],
  messages: ["/v1/messages", { messages: [{ role: "user", content: "hi" }] }],
} as const;
type Route = keyof typeof ROUTES;

/**
 * A streamed request: it answers at once, before any engine step. Its stream is dropped (its
 * engine requests aborted) unless `keep`.
 */
async function send(
  app: ReturnType<typeof setup>["app"],
  route: Route,
  extra: object,
  { id = "r", keep = false } = {},
) {
  const [path, body] = ROUTES[route];
  const res = await app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": id },
    body: JSON.stringify({ ...body, max_tokens: 4, stream: true, ...extra }),
  });
  if (res.status === 200 && !keep) await res.body?.cancel();
  return res;
}

describe("the priority request field", () => {
  for (const personality of ["vllm", "sglang"] as const) {
    it(`${personality}: chat, completions and responses hand it to a priority engine; messages does not`, async () => {
      const { app, seen } = setup({ personality, schedulingPolicy: "priority" });
      for (const [route, priority] of [
        ["chat", 3],
        ["completions", -4],
        ["responses", 5],
        ["messages", 6],
      ] as const)
        assert.equal((await send(app, route, { priority })).status, 200, route);
      assert.deepEqual(
        seen.map((r) => r.priority),
        [3, -4, 5, undefined],
      );
    });
  }

  it("an absent or null priority reaches the engine as none", async () => {
    const { app, seen } = setup({ schedulingPolicy: "priority" });
    await send(app, "chat", {});
    await send(app, "chat", { priority: null });
    assert.deepEqual(
      seen.map((r) => "priority" in r),
      [false, false],
    );
  });

  it("a first come, first served engine never sees it", async () => {
    const { app, seen } = setup();
    for (const route of ["chat", "completions", "responses"] as const)
      await send(app, route, { priority: 1 });
    assert.deepEqual(
      seen.map((r) => r.priority),
      [undefined, undefined, undefined],
    );
  });

  for (const bad of [1.5, "1", true, [1]])
    it(`${JSON.stringify(bad)} is a 400 naming the field where vLLM reads it, ignored on messages`, async () => {
      const { app, seen } = setup({ schedulingPolicy: "priority" });
      for (const route of ["chat", "completions", "responses"] as const) {
        const res = await send(app, route, { priority: bad });
        assert.equal(res.status, 400, route);
        const { error } = await readJson(res);
        assert.deepEqual(
          [error.message, error.param, error.code],
          ["Field `priority` must be an integer.", "priority", 400],
          route,
        );
      }
      assert.equal((await send(app, "messages", { priority: bad })).status, 200);
      assert.deepEqual(
        seen.map((r) => r.priority),
        [undefined],
      );
    });

  for (const [personality, order] of [
    ["vllm", ["low", "mid", "high"]],
    ["sglang", ["high", "mid", "low"]],
  ] as const)
    it(`${personality}: the waiting queue follows it (${order.join(", ")})`, async () => {
      const { app, engine } = setup({ personality, schedulingPolicy: "priority" });
      for (const [id, priority] of [
        ["mid", 2],
        ["high", 9],
        ["low", -9],
      ] as const)
        await send(app, "chat", { priority }, { id, keep: true });
      assert.deepEqual(
        engine.inspect().waiting.map((v) => v.id.replace(/^chatcmpl-(\w+)@\d+$/, "$1")),
        order,
      );
    });
});

describe("priority scheduling settings", () => {
  it("parse from flags, with SGLang's defaults", () => {
    const o = resolveSimBackendOptions({});
    assert.deepEqual(
      [
        o.schedulingPolicy,
        o.scheduleLowPriorityValuesFirst,
        o.prioritySchedulingPreemptionThreshold,
      ],
      ["fcfs", false, 10],
    );
    const p = resolveSimBackendOptions({
      personality: "sglang",
      schedulingPolicy: "priority",
      scheduleLowPriorityValuesFirst: "true",
      prioritySchedulingPreemptionThreshold: "3",
    });
    assert.deepEqual(prioritySchedulingOf(p), {
      rules: "sglang",
      lowValuesFirst: true,
      preemptionThreshold: 3,
    });
    assert.equal(prioritySchedulingOf(o), undefined);
    assert.deepEqual(prioritySchedulingOf({ ...p, personality: "vllm" }), { rules: "vllm" });
  });

  for (const [raw, flag] of [
    [{ schedulingPolicy: "lifo" }, "scheduling-policy"],
    [{ prioritySchedulingPreemptionThreshold: "-1" }, "priority-scheduling-preemption-threshold"],
    [{ prioritySchedulingPreemptionThreshold: "2.5" }, "priority-scheduling-preemption-threshold"],
    [{ vllmMetrics: "v2" }, "vllm-metrics"],
  ] as const)
    it(`refuse ${JSON.stringify(raw)}, naming --${flag}`, () => {
      assert.throws(() => resolveSimBackendOptions(raw), new RegExp(`--${flag}`));
    });

  it("reach the simulated backends of serve --backends sim:N through the config's sim: block", () => {
    const block = simBlockSchema.parse({
      "scheduling-policy": "priority",
      "priority-scheduling-preemption-threshold": 4,
    });
    assert.deepEqual(block, {
      schedulingPolicy: "priority",
      prioritySchedulingPreemptionThreshold: 4,
    });
    assert.throws(() => simBlockSchema.parse({ "scheduling-policy": "sjf" }));
  });
});
