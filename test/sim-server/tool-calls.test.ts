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
} from "./helpers.ts";
import { validate } from "./schema-check.ts";

const WEATHER = {
  type: "object",
  properties: {
    city: { type: "string" },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
    days: { type: "integer", minimum: 1, maximum: 7 },
  },
  required: ["city"],
  additionalProperties: false,
};
const SHELL = {
  type: "object",
  properties: { command: { type: "array", items: { type: "string" }, minItems: 1 } },
  required: ["command"],
};
const TOOLS = [
  {
    type: "function",
    function: { name: "get_weather", description: "Weather", parameters: WEATHER },
  },
  { type: "function", function: { name: "run_shell", parameters: SHELL } },
];
const SCHEMA_OF: Record<string, unknown> = { get_weather: WEATHER, run_shell: SHELL };
const NAMED = { type: "function", function: { name: "get_weather" } };
const TOOL_ID = /^chatcmpl-tool-[0-9a-f]{32}$/;

async function expect400(res: Response, pattern: RegExp) {
  assert.equal(res.status, 400);
  const body = await readJson(res);
  assert.deepEqual(Object.keys(body.error), ["message", "type", "param", "code"]);
  assert.equal(body.error.type, "BadRequestError");
  assert.match(body.error.message, pattern);
}

describe("tool calls, as vLLM streams and answers them", () => {
  let always: SimBackend;
  let never: SimBackend;
  let usual: SimBackend;
  const chat = (b: SimBackend) => `${b.url}/v1/chat/completions`;
  before(async () => {
    [always, never, usual] = await Promise.all([
      startTestBackend({ toolCallShare: 1 }),
      startTestBackend({ toolCallShare: 0 }),
      startTestBackend(),
    ]);
  });
  after(() => Promise.all([always, never, usual].map((b) => b.close())));

  const cases = [
    { choice: NAMED, finish: "stop", content: "" },
    { choice: "required", finish: "tool_calls", content: "" },
    { choice: "auto", finish: "tool_calls", content: null },
  ];
  for (const { choice, finish, content } of cases) {
    const name = typeof choice === "string" ? choice : "named";
    it(`${name}: stream and plain answer carry the same call, arguments fit the schema`, async () => {
      const body = {
        messages: userMessages(`call a tool (${name})`),
        tools: TOOLS,
        tool_choice: choice,
        n: 2,
      };
      const { stream, plain } = await bothAnswers(chat(always), body);
      assert.deepEqual(contentOfStream(stream), contentOfBody(plain));
      let tokens = 0;
      for (const c of plain.choices) {
        assert.equal(c.finish_reason, finish);
        assert.equal(c.message.content, content);
        assert.equal(c.message.tool_calls.length, 1);
        const call = c.message.tool_calls[0];
        assert.deepEqual(Object.keys(call), ["id", "type", "function"]);
        assert.match(call.id, TOOL_ID);
        if (name === "named") assert.equal(call.function.name, "get_weather");
        const args = JSON.parse(call.function.arguments);
        assert.deepEqual(
          validate(args, SCHEMA_OF[call.function.name]),
          [],
          call.function.arguments,
        );
        tokens += encode(call.function.arguments).length;
      }
      assert.equal(
        plain.usage.completion_tokens,
        tokens,
        "the engine generated the arguments' tokens",
      );
    });
  }

  it("max_tokens cuts the arguments short with finish_reason length, streamed or not", async () => {
    const body = { messages: userMessages("cut me"), tools: TOOLS, tool_choice: NAMED };
    const whole = contentOfBody(await readJson(await postJson(chat(always), body)));
    const { stream, plain } = await bothAnswers(chat(always), { ...body, max_tokens: 3 });
    const cut = contentOfBody(plain);
    assert.deepEqual(contentOfStream(stream), cut);
    assert.equal(cut.choices[0].finish, "length");
    assert.equal(plain.usage.completion_tokens, 3);
    const full = whole.choices[0].toolCalls[0].arguments;
    const part = cut.choices[0].toolCalls[0].arguments;
    assert.ok(full.startsWith(part) && part.length < full.length, `${part} is a prefix of ${full}`);
  });

  it("none, and auto at --tool-call-share 0, answer in text", async () => {
    for (const [b, choice] of [
      [always, "none"],
      [never, "auto"],
    ] as const) {
      const body = await readJson(
        await postJson(chat(b), {
          messages: userMessages("just talk"),
          tools: TOOLS,
          tool_choice: choice,
          max_tokens: 5,
        }),
      );
      assert.deepEqual(body.choices[0].message.tool_calls, []);
      assert.equal(typeof body.choices[0].message.content, "string");
    }
  });

  it("auto calls for a share of requests, the same way every time", async () => {
    const calls: boolean[] = [];
    for (let i = 0; i < 24; i++) {
      const body = { messages: userMessages(`request ${i}`), tools: TOOLS, max_tokens: 20 };
      const a = await readJson(await postJson(chat(usual), body));
      const b = await readJson(await postJson(chat(usual), body));
      assert.deepEqual(contentOfBody(a), contentOfBody(b));
      calls.push(a.choices[0].message.tool_calls.length > 0);
    }
    const share = calls.filter(Boolean).length / calls.length;
    assert.ok(share > 0.2 && share < 0.8, `default share 0.5, got ${share}`);
  });

  it("streams vLLM's deltas key for key: id, type, index, function first; then index and arguments", async () => {
    const res = await postJson(chat(always), {
      messages: userMessages("shapes"),
      tools: TOOLS,
      tool_choice: NAMED,
      stream: true,
    });
    const events = sseData(await res.text());
    const chunks = events.slice(0, -1);
    const id = JSON.parse(chunks[0]).id;
    const created = JSON.parse(chunks[0]).created;
    const head = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":"${TEST_MODEL}","choices":`;
    assert.equal(
      chunks[0],
      `${head}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
    );
    const first = JSON.parse(chunks[1]).choices[0].delta.tool_calls[0];
    assert.match(first.id, TOOL_ID);
    assert.equal(
      chunks[1],
      `${head}[{"index":0,"delta":{"tool_calls":[{"id":"${first.id}","type":"function","index":0,"function":{"name":"get_weather","arguments":"{"}}]},"logprobs":null,"finish_reason":null}]}`,
    );
    assert.equal(
      chunks[2],
      `${head}[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\""}}]},"logprobs":null,"finish_reason":null}]}`,
    );
    assert.equal(
      chunks.at(-1),
      `${head}[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}`,
    );
    assert.equal(events.at(-1), "[DONE]");
  });

  it("numbers a named call by its choice, an auto or required call 0, as vLLM does", async () => {
    for (const [choice, want] of [
      [NAMED, [0, 1]],
      ["required", [0, 0]],
    ] as const) {
      const res = await postJson(chat(always), {
        messages: userMessages("indices"),
        tools: TOOLS,
        tool_choice: choice,
        n: 2,
        stream: true,
      });
      const seen = [new Set<number>(), new Set<number>()];
      for (const e of sseData(await res.text()).slice(0, -1)) {
        const c = JSON.parse(e).choices[0];
        for (const call of c.delta.tool_calls ?? []) seen[c.index].add(call.index);
      }
      assert.deepEqual(
        seen.map((s) => [...s]),
        want.map((w) => [w]),
      );
    }
  });

  it("answers a plain request with vLLM's full message", async () => {
    const body = await readJson(
      await postJson(chat(always), {
        messages: userMessages("plain"),
        tools: TOOLS,
        tool_choice: "auto",
      }),
    );
    const message = body.choices[0].message;
    assert.deepEqual(Object.keys(message), [
      "role",
      "content",
      "refusal",
      "annotations",
      "audio",
      "function_call",
      "tool_calls",
      "reasoning_content",
    ]);
    const call = message.tool_calls[0];
    assert.equal(
      JSON.stringify(body.choices[0]),
      `{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[{"id":"${call.id}","type":"function","function":{"name":${JSON.stringify(call.function.name)},"arguments":${JSON.stringify(call.function.arguments)}}}],"reasoning_content":null},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}`,
    );
  });

  it("the official openai client reads tool calls, streamed and not", async () => {
    const client = new OpenAI({ baseURL: `${always.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const request = {
      model: TEST_MODEL,
      messages: [{ role: "user" as const, content: "use the client" }],
      tools: TOOLS as OpenAI.ChatCompletionTool[],
      tool_choice: "required" as const,
    };
    const whole = await client.chat.completions.create(request);
    const call = whole.choices[0].message.tool_calls?.[0];
    assert.ok(call !== undefined && call.type === "function");
    const runner = client.chat.completions.stream(request);
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0].message.tool_calls?.[0];
    assert.ok(streamed !== undefined && streamed.type === "function");
    assert.deepEqual(streamed.function, call.function);
    assert.equal(final.choices[0].finish_reason, "tool_calls");
  });

  it("refuses what vLLM refuses", async () => {
    const post = (body: Json) => postJson(chat(always), { messages: userMessages("x"), ...body });
    await expect400(await post({ tools: [] }), /must not be an empty array/);
    await expect400(await post({ tool_choice: "auto" }), /`tools` must be set/);
    await expect400(
      await post({ tools: TOOLS, tool_choice: "sometimes" }),
      /Invalid value for `tool_choice`/,
    );
    await expect400(
      await post({ tools: TOOLS, tool_choice: { type: "function", function: { name: "nope" } } }),
      /does not match any of the specified `tools`/,
    );
    await expect400(
      await post({ tools: TOOLS, tool_choice: { type: "function" } }),
      /Invalid value for `function`/,
    );
    await expect400(
      await post({ tools: [{ type: "function", function: { parameters: {} } }] }),
      /tools\[0\]/,
    );
    await expect400(
      await post({ tools: [{ type: "retrieval", function: { name: "f" } }] }),
      /tools\[0\]/,
    );
    await expect400(
      await post({ tools: [{ function: { name: "f", parameters: [] } }] }),
      /tools\[0\]/,
    );
    const ok = await post({ tool_choice: "none", max_tokens: 1 });
    assert.equal(ok.status, 200, "tool_choice none needs no tools");
  });
});
