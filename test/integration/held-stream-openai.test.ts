import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { withHeldRouter } from "./helpers/held-router.ts";

/**
 * The official `openai` client reads a held stream as it reads any other: it resolves on the
 * head that comes at once, skips the keep-alive comments, and reads the events to the end, or
 * throws the error event's envelope (helpers/held-router.ts holds the request).
 */

function clientFor(url: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: "sk-test", maxRetries: 0 });
}

/** `program_id` is maitred's extension field, unknown to the client's types. */
function params(programId: string): OpenAI.ChatCompletionCreateParamsStreaming {
  return {
    model: "m",
    messages: [{ role: "user", content: "Stream a few words." }],
    stream: true,
    program_id: programId,
  } as OpenAI.ChatCompletionCreateParamsStreaming;
}

test("the openai client reads a held stream to its end through the keep-alive comments", async () => {
  await withHeldRouter(async (router, backend) => {
    const { data: stream, response } = await clientFor(router.url)
      .chat.completions.create(params("sdk-held"))
      .withResponse();
    assert.equal(response.headers.get("x-maitred-held"), "true");
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1, "answered while held");
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const read = (async () => {
      for await (const chunk of stream) chunks.push(chunk);
    })();
    for (let i = 0; i < 4; i++) router.clock.advance(15_000); // four keep-alives past the first
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1, "still held");
    backend.setNumGpuBlocks(4096);
    await router.ticker.runOnce();
    await read;
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), "t1t2t3t4t5");
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, "stop");
  });
});

test("the openai client throws the error event of a hold that ended in one", async () => {
  await withHeldRouter(async (router) => {
    const stream = await clientFor(router.url).chat.completions.create(params("sdk-late"), {
      headers: { "x-maitred-max-wait-ms": "40000" },
    });
    const read = (async () => {
      for await (const _ of stream);
    })();
    router.clock.advance(40_000);
    await assert.rejects(read, (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.code, "paused_too_long");
      assert.equal(err.type, "ServiceUnavailableError");
      return true;
    });
  });
});
