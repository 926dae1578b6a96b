import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import type { SchedulerEvent } from "../../src/core/events.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/**
 * Under `--router tr` a program may be paused and resumed elsewhere, but a Responses request
 * that continues a stored response (`previous_response_id`) can be served only by the backend
 * that stores it (a simulated vLLM keeps its responses in its own memory and answers 404
 * elsewhere): maitred pins the request there. Two simulated backends with a small KV cache,
 * on one virtual clock (no sleeping), through the official `openai` SDK.
 */
const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
// 65 blocks × 16 tokens ≈ 1 k tokens of KV per backend.
const LS_SCHEMA = {
  type: "object" as const,
  properties: { path: { type: "string" } },
  required: ["path"],
};
const SIM_YAML = "sim:\n  num-gpu-blocks: 65\n  block-size: 16\n  max-model-len: 1024\n";

test("tr: a chained responses.create lands on the backend storing its previous response, even after its program was paused from it and the other backend had room", async () => {
  const router = await startTestRouter(
    { backends: "sim:2", router: "tr" },
    { yaml: SIM_YAML, virtualTime: true },
  );
  try {
    const openai = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "k", maxRetries: 0 });
    const backendOf = (program: string) => router.loop.scheduler.program(program)?.backend;
    const first = await openai.responses.create({
      model: MODEL,
      input: "word ".repeat(400),
      tools: [{ type: "function", name: "ls", parameters: LS_SCHEMA, strict: false }],
      tool_choice: "required",
      prompt_cache_key: "pinned-chain",
    });
    const home = backendOf("pinned-chain");
    assert.ok(home !== undefined && home !== null, "the chain's program is placed");
    // Two large programs in their tool calls: one takes the other backend, the next the chain's
    // home, where the chain's program (in its tool call too) is paused to make room.
    const big = "word ".repeat(850);
    for (const key of ["big-a", "big-b"]) {
      await openai.responses.create({
        model: MODEL,
        input: big,
        tools: [{ type: "function", name: "ls", parameters: LS_SCHEMA, strict: false }],
        tool_choice: "required",
        prompt_cache_key: key,
        store: false,
      });
    }
    assert.notEqual(backendOf("big-a"), home);
    assert.equal(router.loop.scheduler.program("pinned-chain")?.state, "PAUSED");
    assert.equal(router.loop.scheduler.program("pinned-chain")?.originBackend, home);
    // The other backend empties: a program resumed by room alone would go there.
    const released = await fetch(`${router.url}/programs/release`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ program_id: "big-a" }),
    });
    assert.equal(released.status, 200);
    const second = await openai.responses.create({
      model: MODEL,
      input: "go on",
      max_output_tokens: 4,
      previous_response_id: first.id,
    });
    assert.equal(second.previous_response_id, first.id);
    assert.equal(backendOf("pinned-chain"), home, "served where its response is stored");
    const arrived = router.events.filter(
      (e): e is Extract<SchedulerEvent, { kind: "request_arrived" }> =>
        e.kind === "request_arrived" && e.programId === "pinned-chain",
    );
    assert.deepEqual(
      arrived.map((e) => e.pinnedBackend),
      [undefined, home],
      "only the chained request is pinned",
    );
    const counters = router.loop.scheduler.snapshot().counters;
    assert.ok(counters.pauses >= 1, `a pause happened: ${JSON.stringify(counters)}`);
  } finally {
    await router.close();
  }
});
