import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { startTestBackend, TEST_MODEL } from "./helpers.ts";

describe("the official openai client against the simulated backend", () => {
  let backend: SimBackend;
  let client: OpenAI;
  before(async () => {
    backend = await startTestBackend({ enablePromptTokensDetails: true });
    client = new OpenAI({ baseURL: `${backend.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(() => backend.close());

  it("non-streaming chat returns a completion with usage", async () => {
    const completion = await client.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "Hello from the openai client" }],
      max_tokens: 5,
    });
    assert.equal(completion.object, "chat.completion");
    assert.equal(completion.choices[0].message.role, "assistant");
    assert.equal(typeof completion.choices[0].message.content, "string");
    assert.ok(completion.usage !== undefined && completion.usage.completion_tokens <= 5);
  });

  it("streaming chat yields deltas whose text matches the non-streamed answer, then usage", async () => {
    const messages = [{ role: "user" as const, content: "Deterministic answer please" }];
    const whole = await client.chat.completions.create({
      model: TEST_MODEL,
      messages,
      max_tokens: 6,
      // @ts-expect-error vLLM sampling extra, accepted by the server
      ignore_eos: true,
    });
    const stream = await client.chat.completions.create({
      model: TEST_MODEL,
      messages,
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
      // @ts-expect-error vLLM sampling extra, accepted by the server
      ignore_eos: true,
    });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? "";
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(text, whole.choices[0].message.content);
    assert.equal(finish, "length");
    assert.equal(usage?.completion_tokens, 6);
  });

  it("legacy completions stream through the client", async () => {
    const stream = await client.completions.create({
      model: TEST_MODEL,
      prompt: "The quick brown fox",
      max_tokens: 3,
      stream: true,
    });
    let n = 0;
    for await (const chunk of stream) n += chunk.choices.length;
    assert.equal(n, 3);
  });

  it("an unknown model surfaces as the client's NotFoundError", async () => {
    await assert.rejects(
      client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }),
      (err) => err instanceof OpenAI.NotFoundError && err.status === 404,
    );
  });

  it("lists models", async () => {
    const page = await client.models.list();
    assert.deepEqual(
      page.data.map((m) => m.id),
      [TEST_MODEL],
    );
  });
});
