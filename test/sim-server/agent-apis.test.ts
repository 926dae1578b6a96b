import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { startTestBackend, TEST_MODEL } from "./helpers.ts";

/** The simulated backend's Messages and Responses APIs, read by the official SDKs. */
describe("the simulated backend's Messages and Responses APIs with the official SDKs", () => {
  let backend: SimBackend;
  let anthropic: Anthropic;
  let openai: OpenAI;
  before(async () => {
    backend = await startTestBackend({ enablePromptTokensDetails: true });
    anthropic = new Anthropic({ baseURL: backend.url, apiKey: "unused", maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${backend.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(() => backend.close());

  const messages = [{ role: "user" as const, content: "Deterministic answer please" }];

  it("answers a Message streamed and plain with the same text, in vLLM's event order", async () => {
    const params = { model: TEST_MODEL, max_tokens: 6, messages };
    const whole = await anthropic.messages.create(params);
    assert.equal(whole.type, "message");
    assert.equal(whole.stop_reason, "max_tokens");
    const res = await fetch(`${backend.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...params, stream: true }),
    });
    const names = [...(await res.text()).matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(
      [names[0], names[1], names.at(-3), names.at(-2), names.at(-1)],
      [
        "message_start",
        "content_block_start",
        "content_block_stop",
        "message_delta",
        "message_stop",
      ],
    );
    const streamed = await anthropic.messages.stream(params).finalMessage();
    assert.deepEqual(streamed.content, whole.content);
    assert.equal(streamed.usage.output_tokens, 6);
  });

  it("answers a Message with tools with a tool_use block whose input fits the schema", async () => {
    const whole = await anthropic.messages.create({
      model: TEST_MODEL,
      max_tokens: 64,
      messages,
      tools: [
        {
          name: "read",
          input_schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
        },
      ],
      tool_choice: { type: "any" },
    });
    assert.equal(whole.stop_reason, "tool_use");
    const block = whole.content[0] as Anthropic.ToolUseBlock;
    assert.equal(block.type, "tool_use");
    assert.equal(Number.isInteger((block.input as { n: unknown }).n), true);
  });

  it("answers Messages errors in Anthropic's envelope", async () => {
    await assert.rejects(
      anthropic.messages.create({ model: "nope", max_tokens: 3, messages }),
      (err: unknown) => err instanceof Anthropic.NotFoundError,
    );
  });

  it("stores a response, continues it by previous_response_id, and answers a stream ending in response.completed", async () => {
    const first = await openai.responses.create({
      model: TEST_MODEL,
      input: "hi",
      max_output_tokens: 3,
    });
    assert.equal(first.status, "incomplete");
    assert.equal(first.incomplete_details?.reason, "max_output_tokens");
    const stream = await openai.responses.create({
      model: TEST_MODEL,
      input: "go on",
      max_output_tokens: 3,
      previous_response_id: first.id,
      stream: true,
    });
    const types: string[] = [];
    let done: OpenAI.Responses.Response | null = null;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "response.completed") done = e.response;
    }
    assert.equal(types[0], "response.created");
    assert.equal(types.at(-1), "response.completed");
    assert.ok(done !== null && done.usage !== undefined);
    // The stored conversation goes first, so the prompt is longer than the first one.
    assert.ok((done.usage?.input_tokens ?? 0) > (first.usage?.input_tokens ?? 0));
    assert.equal((await openai.responses.retrieve(first.id)).id, first.id);
  });

  it("does not store a response sent with store: false, and 404s an unknown previous_response_id", async () => {
    const r = await openai.responses.create({
      model: TEST_MODEL,
      input: "x",
      max_output_tokens: 2,
      store: false,
    });
    await assert.rejects(
      openai.responses.retrieve(r.id),
      (e: unknown) => e instanceof OpenAI.NotFoundError,
    );
    await assert.rejects(
      openai.responses.create({
        model: TEST_MODEL,
        input: "x",
        previous_response_id: "resp_missing",
      }),
      (e: unknown) => e instanceof OpenAI.NotFoundError,
    );
  });
});
