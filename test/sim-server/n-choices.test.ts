import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { encode } from "../../src/engine/tokenizer.ts";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { bothAnswers, contentOfBody, contentOfStream } from "./answer-content.ts";
import {
  type Json,
  postJson,
  readJson,
  sseData,
  startTestBackend,
  TEST_MODEL,
  userMessages,
  waitForEvent,
} from "./helpers.ts";

const chunksOf = (sse: string): Json[] =>
  sseData(sse)
    .slice(0, -1)
    .map((e) => JSON.parse(e));

describe("n > 1: one engine request per choice, vLLM's shapes", () => {
  let backend: SimBackend;
  let chatUrl: string;
  let completionsUrl: string;
  before(async () => {
    backend = await startTestBackend();
    chatUrl = `${backend.url}/v1/chat/completions`;
    completionsUrl = `${backend.url}/v1/completions`;
  });
  after(() => backend.close());

  it("answers every choice in index order; choice 0 is the n = 1 answer; usage sums the choices", async () => {
    const body = { messages: userMessages("Three answers, please."), max_tokens: 40 };
    const one = await readJson(await postJson(chatUrl, body));
    const three = await readJson(await postJson(chatUrl, { ...body, n: 3 }));
    assert.deepEqual(
      three.choices.map((c: Json) => c.index),
      [0, 1, 2],
    );
    assert.deepEqual(three.choices[0], one.choices[0]);
    const texts = three.choices.map((c: Json) => c.message.content);
    assert.equal(new Set(texts).size, 3, "each choice samples its own answer");
    const tokens = texts.reduce((sum: number, t: string) => sum + encode(t).length, 0);
    assert.equal(three.usage.completion_tokens, tokens);
    assert.equal(three.usage.prompt_tokens, one.usage.prompt_tokens, "the prompt counts once");
  });

  for (const endpoint of ["chat", "completions"] as const) {
    it(`${endpoint}: the stream, joined, says what the plain answer says`, async () => {
      const body =
        endpoint === "chat"
          ? { messages: userMessages("stream or not"), n: 3, max_tokens: 30 }
          : { prompt: "stream or not", n: 3, max_tokens: 30 };
      const { stream, plain } = await bothAnswers(
        endpoint === "chat" ? chatUrl : completionsUrl,
        body,
      );
      assert.equal(plain.choices.length, 3);
      assert.deepEqual(contentOfStream(stream), contentOfBody(plain));
    });
  }

  it("streams one choice per chunk: every role chunk first, the usage chunk last", async () => {
    const res = await postJson(chatUrl, {
      messages: userMessages("chunks per choice"),
      n: 3,
      max_tokens: 4,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = chunksOf(await res.text());
    for (const c of chunks.slice(0, -1)) assert.equal(c.choices.length, 1);
    assert.deepEqual(
      chunks.slice(0, 3).map((c) => [c.choices[0].index, c.choices[0].delta]),
      [0, 1, 2].map((i) => [i, { role: "assistant", content: "" }]),
    );
    const tokenChunks = chunks.slice(3, -1);
    assert.equal(tokenChunks.length, 3 * 4);
    for (const i of [0, 1, 2]) {
      const mine = tokenChunks.filter((c) => c.choices[0].index === i);
      assert.deepEqual(
        mine.map((c) => c.choices[0].finish_reason),
        [null, null, null, "length"],
      );
    }
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.completion_tokens, 12);
  });

  it("continuous usage counts each chunk's own choice", async () => {
    const res = await postJson(completionsUrl, {
      prompt: "running per choice",
      n: 2,
      max_tokens: 3,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const chunks = chunksOf(await res.text());
    for (const i of [0, 1]) {
      const mine = chunks.filter((c) => c.choices[0]?.index === i);
      assert.deepEqual(
        mine.map((c) => c.usage.completion_tokens),
        [1, 2, 3],
      );
      assert.equal(mine[0].usage.prompt_tokens_details, null, "completions print every field");
    }
    assert.equal(chunks.at(-1).usage.completion_tokens, 6);
  });

  it("runs n engine requests, and a client that leaves aborts all of them", async () => {
    const controller = new AbortController();
    let aborts = 0;
    const allAborted = waitForEvent(backend.driver, (e) => e.kind === "aborted" && ++aborts === 4);
    const res = await postJson(
      chatUrl,
      {
        messages: userMessages("four long ones"),
        n: 4,
        max_tokens: 4000,
        ignore_eos: true,
        stream: true,
      },
      { signal: controller.signal },
    );
    const reader = res.body!.getReader();
    await reader.read();
    assert.equal(backend.engine.stats().numRunning, 4);
    controller.abort();
    await allAborted;
    const stats = backend.engine.stats();
    assert.deepEqual([stats.numRunning, stats.numWaiting, stats.kvCacheUsage], [0, 0, 0]);
  });

  it("the official openai client reads n > 1, streamed and not", async () => {
    const client = new OpenAI({ baseURL: `${backend.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "two ways" }];
    const whole = await client.chat.completions.create({
      model: TEST_MODEL,
      messages,
      n: 2,
      max_tokens: 8,
    });
    assert.equal(whole.choices.length, 2);
    const stream = await client.chat.completions.create({
      model: TEST_MODEL,
      messages,
      n: 2,
      max_tokens: 8,
      stream: true,
    });
    const texts = ["", ""];
    for await (const chunk of stream) {
      for (const c of chunk.choices) texts[c.index] += c.delta.content ?? "";
    }
    assert.deepEqual(
      texts,
      whole.choices.map((c) => c.message.content),
    );
    const legacy = await client.completions.create({
      model: TEST_MODEL,
      prompt: "two",
      n: 2,
      max_tokens: 3,
    });
    assert.deepEqual(
      legacy.choices.map((c) => c.index),
      [0, 1],
    );
  });
});
