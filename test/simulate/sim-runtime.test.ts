import assert from "node:assert/strict";
import { test } from "node:test";
import { createEngine } from "../../src/engine/engine.ts";
import { engineConfigFromProfile } from "../../src/engine/timing.ts";
import { createEventKernel } from "../../src/engine/virtual-driver.ts";
import { createSimRuntime, type RequestResult } from "../../src/simulate/sim-runtime.ts";
import { resolveTrKnobs } from "../../src/simulate/simulate-options.ts";

function cluster(mode: "tr" | "default") {
  const kernel = createEventKernel();
  const engine = createEngine(engineConfigFromProfile("llama-3.1-8b-h100", { maxModelLen: 4096 }));
  const { knobs } = resolveTrKnobs({});
  const runtime = createSimRuntime({ kernel, engines: [engine], config: { ...knobs, mode } });
  runtime.tick();
  return { kernel, runtime };
}

const prompt = (n: number) => Array.from({ length: n }, (_, i) => 100 + (i % 50));

test("a request runs on the engine and ends with usage, cached tokens and the core's books updated", () => {
  const { kernel, runtime } = cluster("tr");
  const results: RequestResult[] = [];
  const submit = (id: string) =>
    runtime.submit({
      id,
      programId: "p",
      tokens: prompt(300),
      messageChars: [1200],
      maxTokens: 25,
      onDone: (r) => results.push(r),
    });
  submit("r1");
  kernel.run();
  submit("r2");
  kernel.run();
  assert.equal(results.length, 2);
  const [first, second] = results;
  assert.ok(first.ok && second.ok);
  assert.equal(first.completionTokens, 25);
  assert.equal(first.outputIds.length, 25);
  assert.equal(first.cachedTokens, 0);
  assert.equal(second.cachedTokens, 288, "same prompt again: whole blocks hit the prefix cache");
  const p = runtime.scheduler.program("p");
  assert.equal(p?.status, "ACTING");
  assert.equal(p?.totalTokens, 325, "usage total = prompt + completion");
  assert.equal(runtime.liveRequests, 0);
});

test("a prompt the engine refuses ends as an error for its program, and the core forgets it", () => {
  const { kernel, runtime } = cluster("default");
  let result: RequestResult | null = null;
  runtime.submit({
    id: "too-long",
    programId: "p",
    tokens: prompt(5000),
    messageChars: [20_000],
    maxTokens: 10,
    onDone: (r) => {
      result = r;
    },
  });
  kernel.run();
  const r = result as RequestResult | null;
  assert.ok(r !== null && !r.ok, "want an error result");
  assert.equal(r.error.status, 400);
  assert.equal(r.error.code, "context_length_exceeded");
  assert.equal(runtime.scheduler.program("p")?.inFlight, 0, "the request was finished in the core");
  assert.equal(runtime.liveRequests, 0);
});

test("an interactive request preempts a bulk one before its first token: 503 preempted, engine aborted", () => {
  const kernel = createEventKernel();
  // 300 blocks × 16 = 4800 tokens of KV: a 3000-token bulk prompt leaves no room for 2000 more.
  const engine = createEngine(
    engineConfigFromProfile("llama-3.1-8b-h100", { maxModelLen: 4096, numGpuBlocks: 300 }),
  );
  const { knobs } = resolveTrKnobs({ priority: true });
  const runtime = createSimRuntime({ kernel, engines: [engine], config: { ...knobs, mode: "tr" } });
  runtime.tick();
  const results = new Map<string, RequestResult>();
  const submit = (id: string, tokens: number, priorityClass: "bulk" | "interactive") =>
    runtime.submit({
      id,
      programId: id.toUpperCase(),
      tokens: prompt(tokens),
      messageChars: [tokens * 5], // the core's initial 5 characters per token
      maxTokens: 20,
      priorityClass,
      onDone: (r) => results.set(id, r),
    });
  submit("b", 3000, "bulk");
  submit("i", 2000, "interactive"); // same instant: b has not produced a token yet
  kernel.run();
  const b = results.get("b");
  const i = results.get("i");
  assert.ok(b && !b.ok, "the bulk request was answered with an error");
  assert.equal(b.error.status, 503);
  assert.equal(b.error.headers["x-maitred-preempted"], "true");
  assert.ok(i?.ok, "the interactive request ran");
  assert.ok(i.firstTokenMs !== undefined, "its first token was committed and recorded");
  assert.equal(engine.stats().promptTokens, i.promptTokens, "b was aborted before its prefill");
  assert.equal(engine.stats().generationTokens, 20, "only i generated");
  assert.equal(runtime.scheduler.snapshot().priority?.classes.bulk.admissions.preempted, 1);
});

test("an engine that schedules by priority is declared to the core with its polarity; an fcfs one is not", () => {
  const { knobs } = resolveTrKnobs({});
  const engineWith = (
    priorityScheduling?: Parameters<typeof createEngine>[0]["priorityScheduling"],
  ) =>
    createEngine({
      ...engineConfigFromProfile("llama-3.1-8b-h100", { maxModelLen: 4096 }),
      ...(priorityScheduling === undefined ? {} : { priorityScheduling }),
    });
  const runtime = createSimRuntime({
    kernel: createEventKernel(),
    engines: [
      engineWith(),
      engineWith({ rules: "vllm" }),
      engineWith({ rules: "sglang", lowValuesFirst: false, preemptionThreshold: 10 }),
      engineWith({ rules: "sglang", lowValuesFirst: true, preemptionThreshold: 10 }),
    ],
    config: { ...knobs, mode: "default" },
  });
  assert.deepEqual(
    runtime.scheduler.snapshot().backends.map((b) => b.priorityScheduling),
    [null, "lower-first", "higher-first", "lower-first"],
  );
});
