import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
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
} from "./helpers.ts";

const utf8 = (s: string) => [...new TextEncoder().encode(s)];

async function expect400(res: Response, message: string, param: string) {
  assert.equal(res.status, 400);
  const body = await readJson(res);
  assert.deepEqual(body.error, { message, type: "BadRequestError", param, code: 400 });
}

describe("logprobs in vLLM's two shapes", () => {
  let backend: SimBackend;
  let chatUrl: string;
  let completionsUrl: string;
  before(async () => {
    backend = await startTestBackend({ toolCallShare: 1 });
    chatUrl = `${backend.url}/v1/chat/completions`;
    completionsUrl = `${backend.url}/v1/completions`;
  });
  after(() => backend.close());

  it("chat: one entry per token, the chosen token first and likeliest among top_logprobs", async () => {
    const body = await readJson(
      await postJson(chatUrl, {
        messages: userMessages("logprobs"),
        logprobs: true,
        top_logprobs: 3,
        max_tokens: 6,
      }),
    );
    const content = body.choices[0].logprobs.content as Json[];
    assert.deepEqual(Object.keys(body.choices[0].logprobs), ["content"]);
    assert.equal(content.map((e) => e.token).join(""), body.choices[0].message.content);
    for (const e of content) {
      assert.deepEqual(Object.keys(e), ["token", "logprob", "bytes", "top_logprobs"]);
      assert.deepEqual(e.bytes, utf8(e.token));
      assert.equal(e.top_logprobs.length, 3);
      assert.deepEqual(e.top_logprobs[0], { token: e.token, logprob: e.logprob, bytes: e.bytes });
      const values = e.top_logprobs.map((t: Json) => t.logprob);
      assert.deepEqual(
        values,
        [...values].sort((a, b) => b - a),
      );
      assert.ok(e.logprob < 0);
      assert.equal(new Set(e.top_logprobs.map((t: Json) => t.token)).size, 3);
    }
  });

  it("chat: logprobs true without top_logprobs lists no alternatives", async () => {
    const body = await readJson(
      await postJson(chatUrl, { messages: userMessages("no top"), logprobs: true, max_tokens: 2 }),
    );
    for (const e of body.choices[0].logprobs.content) assert.deepEqual(e.top_logprobs, []);
  });

  it("completions: the four lists, top_logprobs as objects, at least the chosen token", async () => {
    const body = await readJson(
      await postJson(completionsUrl, { prompt: "legacy", logprobs: 0, max_tokens: 4 }),
    );
    const lp = body.choices[0].logprobs;
    assert.deepEqual(Object.keys(lp), ["text_offset", "token_logprobs", "tokens", "top_logprobs"]);
    assert.equal(lp.tokens.join(""), body.choices[0].text);
    let offset = 0;
    lp.tokens.forEach((t: string, i: number) => {
      assert.equal(lp.text_offset[i], offset);
      offset += t.length;
      assert.deepEqual(lp.top_logprobs[i], { [t]: lp.token_logprobs[i] });
    });
  });

  const requests: Array<[string, () => string, Json]> = [
    [
      "chat text",
      () => chatUrl,
      {
        messages: userMessages("same either way"),
        logprobs: true,
        top_logprobs: 2,
        n: 2,
        max_tokens: 12,
      },
    ],
    [
      "chat tool call",
      () => chatUrl,
      {
        messages: userMessages("a call with logprobs"),
        logprobs: true,
        top_logprobs: 1,
        tools: [
          {
            type: "function",
            function: {
              name: "f",
              parameters: {
                type: "object",
                properties: { a: { type: "string" } },
                required: ["a"],
              },
            },
          },
        ],
      },
    ],
    [
      "completions",
      () => completionsUrl,
      { prompt: "offsets carry on", logprobs: 3, n: 2, max_tokens: 12 },
    ],
  ];
  for (const [name, url, body] of requests) {
    it(`${name}: the stream's logprobs, joined, are the plain answer's`, async () => {
      const { stream, plain } = await bothAnswers(url(), body);
      const joined = contentOfStream(stream);
      assert.ok(joined.choices.every((c) => c.logprobs !== null));
      assert.deepEqual(joined, contentOfBody(plain));
    });
  }

  it("streams each chunk's own entries; completions offsets continue across chunks", async () => {
    const res = await postJson(completionsUrl, {
      prompt: "chunked",
      logprobs: 1,
      max_tokens: 3,
      ignore_eos: true,
      stream: true,
    });
    const chunks = sseData(await res.text())
      .slice(0, -1)
      .map((e) => JSON.parse(e));
    let offset = 0;
    for (const c of chunks) {
      const lp = c.choices[0].logprobs;
      assert.deepEqual(lp.tokens, [c.choices[0].text]);
      assert.deepEqual(lp.text_offset, [offset]);
      offset += c.choices[0].text.length;
    }
    const id = chunks[0].id;
    const created = chunks[0].created;
    const first = chunks[0].choices[0];
    const [token, value] = Object.entries(first.logprobs.top_logprobs[0])[0];
    assert.equal(
      JSON.stringify(chunks[0]),
      `{"id":"${id}","object":"text_completion","created":${created},"model":"${TEST_MODEL}","choices":[{"index":0,"text":${JSON.stringify(first.text)},"logprobs":{"text_offset":[0],"token_logprobs":[${value}],"tokens":[${JSON.stringify(token)}],"top_logprobs":[{${JSON.stringify(token)}:${value}}]},"finish_reason":null,"stop_reason":null}],"usage":null}`,
    );
  });

  it("the official openai client reads logprobs, streamed and not", async () => {
    const client = new OpenAI({ baseURL: `${backend.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const request = {
      model: TEST_MODEL,
      messages: [{ role: "user" as const, content: "client logprobs" }],
      logprobs: true,
      top_logprobs: 2,
      max_tokens: 4,
    };
    const whole = await client.chat.completions.create(request);
    const entries: OpenAI.ChatCompletionTokenLogprob[] = [];
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
      for (const c of chunk.choices) entries.push(...(c.logprobs?.content ?? []));
    }
    assert.deepEqual(entries, whole.choices[0].logprobs?.content);
  });

  it("refuses what vLLM refuses", async () => {
    const chat = (body: Json) => postJson(chatUrl, { messages: userMessages("x"), ...body });
    await expect400(
      await chat({ top_logprobs: 2 }),
      "when using `top_logprobs`, `logprobs` must be set to true.",
      "top_logprobs",
    );
    await expect400(
      await chat({ logprobs: true, top_logprobs: -1 }),
      "`top_logprobs` must be a positive value.",
      "top_logprobs",
    );
    await expect400(
      await chat({ logprobs: true, top_logprobs: 21 }),
      "Requested sample logprobs of 21, which is greater than max allowed: 20",
      "top_logprobs",
    );
    const legacy = (body: Json) => postJson(completionsUrl, { prompt: "x", ...body });
    await expect400(
      await legacy({ logprobs: -1 }),
      "`logprobs` must be a positive value.",
      "logprobs",
    );
    await expect400(
      await legacy({ logprobs: 21 }),
      "Requested sample logprobs of 21, which is greater than max allowed: 20",
      "logprobs",
    );
    assert.equal(
      (await chat({ top_logprobs: 0, max_tokens: 1 })).status,
      200,
      "0 needs no logprobs",
    );
  });
});
