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

/**
 * Backends that write their error in another shape than the envelope: the flat one of SGLang
 * (and of vLLM before the envelope), and FastAPI's `detail`. Not held, the client throws on the
 * status; held, the status went out as 200 long before, so only the error event can tell it,
 * and it must carry an `error` member for the client to throw rather than read a chunk.
 */
const OTHER_SHAPES = [
  {
    shape: "flat",
    status: 400,
    body: {
      object: "error",
      message: "This model's maximum context length is 4096 tokens.",
      type: "BadRequestError",
      param: null,
      code: 400,
    },
    message: "This model's maximum context length is 4096 tokens.",
    type: "BadRequestError",
  },
  {
    shape: "detail",
    status: 422,
    body: { detail: "Input should be a valid list" },
    message: "Input should be a valid list",
    type: "BadRequestError",
  },
] as const;

for (const { shape, status, body, message, type } of OTHER_SHAPES) {
  const headers = { "x-fake-status": String(status), "x-fake-error-body": JSON.stringify(body) };

  test(`the openai client throws a backend's ${shape} error body on a stream seated at once (its status)`, async () => {
    await withHeldRouter(async (router, backend) => {
      backend.setNumGpuBlocks(4096);
      await router.ticker.runOnce();
      const create = clientFor(router.url).chat.completions.create(params(`sdk-${shape}-now`), {
        headers,
      });
      await assert.rejects(create, (err: unknown) => {
        assert.ok(err instanceof OpenAI.APIError, String(err));
        assert.equal(err.status, status);
        return true;
      });
    });
  });

  test(`the openai client throws a backend's ${shape} error body on a held stream (its event)`, async () => {
    await withHeldRouter(async (router, backend) => {
      const { data: stream, response } = await clientFor(router.url)
        .chat.completions.create(params(`sdk-${shape}-held`), { headers })
        .withResponse();
      assert.equal(response.headers.get("x-maitred-held"), "true");
      const chunks: unknown[] = [];
      const read = (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })();
      backend.setNumGpuBlocks(4096);
      await router.ticker.runOnce();
      await assert.rejects(read, (err: unknown) => {
        assert.ok(err instanceof OpenAI.APIError, String(err));
        assert.equal(err.message, message);
        assert.equal(err.type, type);
        return true;
      });
      assert.deepEqual(chunks, [], "no chunk was made of the error");
    });
  });
}
