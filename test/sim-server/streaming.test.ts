import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { chatPromptTokens } from "../../src/engine/chat-template.ts";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import {
  postJson,
  readJson,
  sseData,
  startTestBackend,
  TEST_MODEL,
  userMessages,
} from "./helpers.ts";

const BLOCK = 16;

describe("generation over HTTP (vLLM shapes)", () => {
  let backend: SimBackend;
  before(async () => {
    backend = await startTestBackend({ enablePromptTokensDetails: true });
  });
  after(() => backend.close());

  it("streams role chunk, one chunk per token, finish on the last token, usage chunk, [DONE]", async () => {
    const res = await postJson(`${backend.url}/v1/chat/completions`, {
      model: TEST_MODEL,
      messages: userMessages("Tell me a story about a streaming test."),
      max_tokens: 4,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
    const events = sseData(await res.text());
    assert.equal(events.at(-1), "[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.equal(
      chunks.length,
      1 + 4 + 1,
      `got ${chunks.length} chunks, want role + 4 tokens + usage`,
    );
    const [role, ...rest] = chunks;
    assert.deepEqual(role.choices, [
      { index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
    ]);
    assert.equal(role.object, "chat.completion.chunk");
    assert.ok(!("usage" in role), "chat chunks carry no usage key unless asked for");
    const tokens = rest.slice(0, 4);
    for (const [i, c] of tokens.entries()) {
      assert.equal(c.id, role.id);
      assert.equal(c.created, role.created);
      assert.equal(typeof c.choices[0].delta.content, "string");
      assert.equal(c.choices[0].finish_reason, i === 3 ? "length" : null);
      assert.equal("stop_reason" in c.choices[0], i === 3, "stop_reason only on the final chunk");
    }
    const usage = rest[4];
    assert.deepEqual(usage.choices, []);
    const promptTokens = chatPromptTokens(userMessages("Tell me a story about a streaming test."), {
      addGenerationPrompt: true,
    }).length;
    assert.deepEqual(usage.usage, {
      prompt_tokens: promptTokens,
      total_tokens: promptTokens + 4,
      completion_tokens: 4,
    });
    assert.deepEqual(Object.keys(usage.usage), [
      "prompt_tokens",
      "total_tokens",
      "completion_tokens",
    ]);
  });

  it("reports cached = floor((L−1)/16)·16 on a second identical request", async () => {
    const body = {
      messages: userMessages("A prompt long enough to fill several KV blocks. ".repeat(8)),
      max_tokens: 2,
      ignore_eos: true,
    };
    const L = chatPromptTokens(body.messages, { addGenerationPrompt: true }).length;
    const first = await readJson(await postJson(`${backend.url}/v1/chat/completions`, body));
    assert.equal(first.usage.prompt_tokens, L);
    assert.equal(first.usage.prompt_tokens_details, null, "nothing cached on the first request");
    const second = await readJson(await postJson(`${backend.url}/v1/chat/completions`, body));
    assert.deepEqual(second.usage.prompt_tokens_details, {
      cached_tokens: Math.floor((L - 1) / BLOCK) * BLOCK,
    });
    assert.equal(second.choices[0].message.content, first.choices[0].message.content);
  });

  it("streams /v1/completions with every field, usage:null, then the usage chunk", async () => {
    const res = await postJson(`${backend.url}/v1/completions`, {
      prompt: "Once upon a time",
      max_tokens: 3,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    const events = sseData(await res.text());
    assert.equal(events.length, 3 + 1 + 1);
    const first = JSON.parse(events[0]);
    assert.equal(first.object, "text_completion");
    assert.equal(first.usage, null);
    assert.deepEqual(Object.keys(first.choices[0]), [
      "index",
      "text",
      "logprobs",
      "finish_reason",
      "stop_reason",
    ]);
    assert.equal(JSON.parse(events[2]).choices[0].finish_reason, "length");
    assert.deepEqual(JSON.parse(events[3]).choices, []);
    assert.equal(JSON.parse(events[3]).usage.completion_tokens, 3);
  });

  it("continuous_usage_stats puts a running usage on every chunk, 0 completion tokens on the role chunk, then the usage chunk include_usage defaults to", async () => {
    const res = await postJson(`${backend.url}/v1/chat/completions`, {
      messages: userMessages("running usage"),
      max_tokens: 3,
      ignore_eos: true,
      stream: true,
      stream_options: { continuous_usage_stats: true },
    });
    const chunks = sseData(await res.text())
      .slice(0, -1)
      .map((e) => JSON.parse(e));
    assert.deepEqual(
      chunks.map((c) => c.usage.completion_tokens),
      [0, 1, 2, 3, 3],
    );
    assert.deepEqual(chunks.at(-1).choices, []);
    for (const c of chunks.slice(0, -1)) {
      assert.ok(!("prompt_tokens_details" in c.usage), "a running usage reports no cached tokens");
    }
  });

  it("continuous_usage_stats without include_usage sends no usage at all", async () => {
    const res = await postJson(`${backend.url}/v1/chat/completions`, {
      messages: userMessages("no running usage"),
      max_tokens: 2,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: false, continuous_usage_stats: true },
    });
    const chunks = sseData(await res.text())
      .slice(0, -1)
      .map((e) => JSON.parse(e));
    assert.equal(chunks.length, 3);
    for (const c of chunks) assert.ok(!("usage" in c));
  });

  it("uses X-Request-Id for the response id and echoes it", async () => {
    const res = await postJson(
      `${backend.url}/v1/chat/completions`,
      { messages: userMessages("hi"), max_tokens: 1 },
      { headers: { "x-request-id": "trace-42" } },
    );
    const body = await readJson(res);
    assert.equal(body.id, "chatcmpl-trace-42");
    assert.equal(res.headers.get("x-request-id"), "trace-42");
  });

  it("stops at max_completion_tokens with finish_reason length when min_tokens equals it", async () => {
    const res = await postJson(`${backend.url}/v1/chat/completions`, {
      messages: userMessages("min tokens check"),
      min_tokens: 5,
      max_completion_tokens: 5,
    });
    const body = await readJson(res);
    assert.equal(body.usage.completion_tokens, 5);
    assert.equal(body.choices[0].finish_reason, "length");
  });

  it("answers /tokenize with the count later reported as usage.prompt_tokens", async () => {
    const messages = userMessages("count me consistently");
    const tok = await readJson(await postJson(`${backend.url}/tokenize`, { messages }));
    const gen = await readJson(
      await postJson(`${backend.url}/v1/chat/completions`, { messages, max_tokens: 1 }),
    );
    assert.equal(tok.count, gen.usage.prompt_tokens);
    assert.equal(tok.tokens.length, tok.count);
    const detok = await readJson(
      await postJson(`${backend.url}/detokenize`, { tokens: tok.tokens }),
    );
    assert.match(detok.prompt, /count me consistently/);
  });

  it("lists the served model and answers health, ping and version", async () => {
    const models = await readJson(await fetch(`${backend.url}/v1/models`));
    assert.equal(models.data[0].id, TEST_MODEL);
    assert.equal(models.data[0].max_model_len, 8192);
    for (const path of ["/health", "/ping"]) {
      const res = await fetch(`${backend.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(await res.text(), "");
    }
    assert.match(
      (await readJson(await fetch(`${backend.url}/version`))).version,
      /^\d+\.\d+\.\d+$/,
    );
  });
});
