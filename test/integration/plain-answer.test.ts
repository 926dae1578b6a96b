/**
 * A client that asks for a plain (non-streamed) answer: maitred streams from the backend, so
 * the scheduler sees the request's first token and progress, and rebuilds the answer the
 * backend would have given. Checked against the simulated backend's own plain answers.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { postJson, startTestBackend, TEST_MODEL } from "../sim-server/helpers.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("plain-answer", () => {
  let backend: SimBackend;
  let router: TestRouter;

  before(async () => {
    backend = await startTestBackend();
    router = await startTestRouter({ backends: backend.url, "progress-interval-tokens": "8" });
  });
  after(async () => {
    await router.close();
    await backend.close();
  });

  type Json = Record<string, unknown>;

  /** The same answer apart from what differs per request (ids and creation time). */
  function comparable(body: Json): Json {
    const choices = (body.choices as Json[]).map((c) => {
      const message = c.message as Json | undefined;
      const calls = message?.tool_calls as Json[] | null | undefined;
      if (!calls || calls.length === 0) return c;
      return {
        ...c,
        message: { ...message, tool_calls: calls.map((t) => ({ ...t, id: "<id>" })) },
      };
    });
    return { ...body, id: "<id>", created: 0, choices };
  }

  const WEATHER = {
    type: "function",
    function: {
      name: "get_weather",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string" },
          days: { type: "integer", minimum: 1, maximum: 7 },
          unit: { enum: ["c", "f"] },
        },
        required: ["city", "days"],
      },
    },
  };
  const SEARCH = {
    type: "function",
    function: {
      name: "search",
      parameters: { type: "object", properties: { q: { type: "string" } } },
    },
  };
  const ask = (content: string, extra: Json = {}): Json => ({
    model: TEST_MODEL,
    messages: [{ role: "user", content }],
    max_tokens: 24,
    ...extra,
  });

  async function plain(
    base: string,
    path: string,
    body: Json,
    headers: Record<string, string> = {},
  ) {
    const res = await postJson(`${base}${path}`, body, { headers });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    return (await res.json()) as Json;
  }

  test("a plain answer through maitred is the backend's own plain answer, for chat and completions", async () => {
    const cases: [string, Json][] = [
      [
        "/v1/chat/completions",
        { model: TEST_MODEL, messages: [{ role: "user", content: "tell me" }], max_tokens: 30 },
      ],
      ["/v1/completions", { model: TEST_MODEL, prompt: "once upon", max_tokens: 12 }],
      [
        "/v1/chat/completions",
        {
          model: TEST_MODEL,
          messages: [{ role: "user", content: "exactly" }],
          max_tokens: 20,
          ignore_eos: true,
          stream: false,
        },
      ],
      ["/v1/chat/completions", ask("three ways", { n: 3, logprobs: true, top_logprobs: 2 })],
      [
        "/v1/chat/completions",
        ask("weather?", { tools: [WEATHER, SEARCH], tool_choice: "required", n: 2 }),
      ],
      [
        "/v1/chat/completions",
        ask("named", {
          tools: [WEATHER],
          tool_choice: { type: "function", function: { name: "get_weather" } },
        }),
      ],
      ["/v1/chat/completions", ask("maybe a call", { tools: [WEATHER, SEARCH], n: 4 })],
      [
        "/v1/chat/completions",
        ask("cut short", { tools: [WEATHER], tool_choice: "required", max_tokens: 3 }),
      ],
      ["/v1/completions", { model: TEST_MODEL, prompt: "two", max_tokens: 6, n: 2, logprobs: 3 }],
    ];
    for (const [path, body] of cases) {
      const direct = await plain(backend.url, path, body);
      const routed = await plain(router.url, path, body, { "x-program-id": `p-${path}` });
      // Byte for byte once ids and times are set aside: same fields, same order, same values.
      assert.equal(JSON.stringify(comparable(routed)), JSON.stringify(comparable(direct)), path);
    }
  });

  test("the core sees the first token and progress of a plain request, as of a streamed one", async () => {
    const from = router.events.length;
    const body = await plain(
      router.url,
      "/v1/chat/completions",
      {
        model: TEST_MODEL,
        messages: [{ role: "user", content: "count" }],
        max_tokens: 40,
        ignore_eos: true,
      },
      { "x-program-id": "plain-progress" },
    );
    assert.equal((body.usage as Json).completion_tokens, 40);
    const arrived = router.events
      .slice(from)
      .find((e) => e.kind === "request_arrived" && e.programId === "plain-progress");
    assert.ok(arrived && arrived.kind === "request_arrived");
    const mine = router.events
      .slice(from)
      .filter((e) => "requestId" in e && e.requestId === arrived.requestId)
      .map((e) => e.kind);
    assert.equal(mine.filter((k) => k === "request_first_token").length, 1, mine.join());
    assert.ok(mine.filter((k) => k === "request_progress").length >= 1, mine.join());
    assert.ok(mine.indexOf("request_first_token") < mine.indexOf("request_usage"));
    const view = router.loop.scheduler.program("plain-progress");
    assert.equal(view?.steps, 1);
  });

  test("the official openai client reads rebuilt tool calls and several choices", async () => {
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "k", maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "weather in two places" }],
      tools: [WEATHER as OpenAI.Chat.ChatCompletionTool],
      tool_choice: "required",
      n: 2,
      max_tokens: 40,
    });
    assert.equal(answer.choices.length, 2);
    for (const choice of answer.choices) {
      assert.equal(choice.finish_reason, "tool_calls");
      const call = choice.message.tool_calls?.[0];
      assert.ok(call && call.type === "function");
      assert.equal(call.function.name, "get_weather");
      const args = JSON.parse(call.function.arguments);
      assert.equal(typeof args.city, "string");
      assert.ok(Number.isInteger(args.days) && args.days >= 1 && args.days <= 7);
    }
  });

  test("the official openai client reads the rebuilt answer", async () => {
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "k", maxRetries: 0 });
    const request = {
      model: TEST_MODEL,
      messages: [{ role: "user" as const, content: "hi there" }],
      max_tokens: 16,
    };
    const routed = await client.chat.completions.create(request);
    const direct = await new OpenAI({
      baseURL: `${backend.url}/v1`,
      apiKey: "k",
      maxRetries: 0,
    }).chat.completions.create(request);
    assert.equal(routed.object, "chat.completion");
    assert.equal(routed.choices[0].message.content, direct.choices[0].message.content);
    assert.equal(routed.choices[0].finish_reason, direct.choices[0].finish_reason);
    assert.deepEqual(routed.usage, direct.usage);
  });

  test("--upstream-stream as-client sends a plain request as the client sent it", async () => {
    const fake = await startFakeBackend({ tokens: 3 });
    const asClient = await startTestRouter({ backends: fake.url, "upstream-stream": "as-client" });
    const always = await startTestRouter({ backends: fake.url });
    try {
      const body = { model: "m", messages: [{ role: "user", content: "x" }] };
      const passed = await plain(asClient.url, "/v1/chat/completions", body);
      assert.equal(fake.received.at(-1)?.body.stream, undefined);
      assert.equal((passed.choices as Json[]).length, 1);
      await plain(always.url, "/v1/chat/completions", body);
      assert.equal(fake.received.at(-1)?.body.stream, true);
      assert.deepEqual(fake.received.at(-1)?.body.stream_options, { include_usage: true });
    } finally {
      await asClient.close();
      await always.close();
      await fake.close();
    }
  });
});
