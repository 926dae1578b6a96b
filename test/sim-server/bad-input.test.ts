import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { postJson, readJson, startTestBackend, TEST_MODEL, userMessages } from "./helpers.ts";

async function expectError(res: Response, status: number, param?: string | null) {
  assert.equal(res.status, status, `got status ${res.status}, want ${status}`);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  const body = await readJson(res);
  assert.deepEqual(Object.keys(body.error), ["message", "type", "param", "code"]);
  assert.equal(body.error.code, status);
  assert.equal(typeof body.error.message, "string");
  if (param !== undefined) assert.equal(body.error.param, param);
  return body.error;
}

describe("bad input gets what vLLM gives it", () => {
  let backend: SimBackend;
  const chat = (body: unknown) => postJson(`${backend.url}/v1/chat/completions`, body);
  before(async () => {
    backend = await startTestBackend({ maxModelLen: 256 });
  });
  after(() => backend.close());

  it("malformed JSON → 400", async () => {
    await expectError(await chat('{"messages": ['), 400);
  });

  it("a JSON body that is not an object → 400", async () => {
    await expectError(await chat("[1, 2]"), 400);
  });

  it("a known field of the wrong type → 400 naming the field", async () => {
    await expectError(
      await chat({ messages: userMessages("x"), max_tokens: "ten" }),
      400,
      "max_tokens",
    );
    await expectError(await chat({ messages: userMessages("x"), stream: "yes" }), 400, "stream");
    await expectError(await chat({ messages: "hello" }), 400, "messages");
    await expectError(await chat({ messages: [{ content: "no role" }] }), 400, "messages");
  });

  it("an unknown role → 400", async () => {
    await expectError(await chat({ messages: [{ role: "narrator", content: "x" }] }), 400);
  });

  it("unknown model → 404 NotFoundError with param model", async () => {
    const err = await expectError(
      await chat({ model: "nope", messages: userMessages("x") }),
      404,
      "model",
    );
    assert.equal(err.type, "NotFoundError");
    assert.equal(err.message, "The model `nope` does not exist.");
  });

  it("unknown extra fields (a router's program_id) are ignored → 200", async () => {
    const res = await chat({
      model: TEST_MODEL,
      messages: userMessages("x"),
      max_tokens: 1,
      program_id: "prog-1",
      extra: { nested: true },
    });
    assert.equal(res.status, 200);
  });

  it("stream_options without stream → 400", async () => {
    const err = await expectError(
      await chat({ messages: userMessages("x"), stream_options: { include_usage: true } }),
      400,
      "stream_options",
    );
    assert.match(err.message, /stream=True/);
  });

  it("a prompt at or over --max-model-len → 400 with vLLM's message", async () => {
    const err = await expectError(await chat({ messages: userMessages("word ".repeat(400)) }), 400);
    assert.match(err.message, /maximum context length is 256 tokens/);
  });

  it("prompt + max_tokens over --max-model-len → 400", async () => {
    await expectError(await chat({ messages: userMessages("x"), max_tokens: 1000 }), 400);
  });

  it("n below 1, above the simulated ceiling or not an integer → 400", async () => {
    const zero = await expectError(await chat({ messages: userMessages("x"), n: 0 }), 400, "n");
    assert.equal(zero.message, "n must be at least 1, got 0.");
    await expectError(await chat({ messages: userMessages("x"), n: 129 }), 400, "n");
    await expectError(await chat({ messages: userMessages("x"), n: 1.5 }), 400, "n");
    const url = `${backend.url}/v1/completions`;
    await expectError(await postJson(url, { prompt: "x", n: -1 }), 400, "n");
  });

  it("max_tokens 0 and min_tokens above max_tokens → 400", async () => {
    await expectError(await chat({ messages: userMessages("x"), max_tokens: 0 }), 400);
    await expectError(
      await chat({ messages: userMessages("x"), max_tokens: 2, min_tokens: 5 }),
      400,
    );
  });

  it("completions: batched prompts and out-of-vocabulary ids → 400", async () => {
    const url = `${backend.url}/v1/completions`;
    await expectError(await postJson(url, { prompt: ["a", "b"] }), 400, "prompt");
    await expectError(await postJson(url, { prompt: [1, 2, 999999999] }), 400, "prompt");
    await expectError(await postJson(url, { prompt: 42 }), 400, "prompt");
    await expectError(await postJson(url, { prompt: "" }), 400, "prompt");
  });

  it("an unknown route → 404 envelope", async () => {
    await expectError(await fetch(`${backend.url}/v1/nothing`), 404);
  });

  it("the server keeps serving after all of the above", async () => {
    const res = await chat({ messages: userMessages("still alive?"), max_tokens: 2 });
    assert.equal(res.status, 200);
    assert.equal((await readJson(res)).usage.completion_tokens, 2);
  });
});
