import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  type AnswerFields,
  type ChoicesDialect,
  SIM_BACKEND_FIELDS,
} from "../../src/sim-server/answer-fields.ts";
import {
  completionResponseBody,
  completionResponseJson,
  createChunkWriter,
  type ResponseMeta,
} from "../../src/sim-server/openai-shapes.ts";
import { anyText } from "../util/any-text.ts";

const chatMeta: ResponseMeta = {
  endpoint: "chat",
  id: "chatcmpl-7d3f0c2e",
  created: 1763312400,
  model: "Qwen/Qwen3-8B",
};
const usage = { promptTokens: 12, completionTokens: 3, cachedTokens: null };

describe("chat chunks", () => {
  it("match vLLM's exclude_unset stream byte for byte (vLLM's sample)", () => {
    const w = createChunkWriter(chatMeta);
    const stream = [
      w.role(null),
      w.delta("Hello", null, null),
      w.delta(" there", null, null),
      w.delta("!", "stop", null),
      w.usage(usage),
    ].join("");
    const want = [
      'data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}',
      'data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}',
      'data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" there"},"logprobs":null,"finish_reason":null}]}',
      'data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"!"},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}',
      'data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3}}',
      "",
    ].join("\n\n");
    assert.equal(stream, want);
  });

  it("adds prompt_tokens_details after the counts when cached tokens are reported", () => {
    const w = createChunkWriter(chatMeta);
    assert.match(
      w.usage({ ...usage, cachedTokens: 8 }),
      /"usage":\{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3,"prompt_tokens_details":\{"cached_tokens":8\}\}\}/,
    );
  });

  it("JSON-escapes ids and text from clients", () => {
    const w = createChunkWriter({ ...chatMeta, id: 'chatcmpl-"x"' });
    const chunk = JSON.parse(w.delta('a"\n', null, null).slice("data: ".length));
    assert.equal(chunk.id, 'chatcmpl-"x"');
    assert.equal(chunk.choices[0].delta.content, 'a"\n');
  });
});

describe("completion chunks", () => {
  it("match vLLM's full dump with usage:null (vLLM's sample)", () => {
    const w = createChunkWriter({ ...chatMeta, endpoint: "completions", id: "cmpl-5b1e" });
    assert.equal(
      w.delta(" world", null, null),
      'data: {"id":"cmpl-5b1e","object":"text_completion","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"text":" world","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}\n\n',
    );
  });
});

describe("non-streaming bodies", () => {
  it("chat matches vLLM's model_dump with nulls ", () => {
    const body = JSON.parse(completionResponseJson(chatMeta, "Hello there!", "stop", usage));
    assert.deepEqual(body, {
      id: "chatcmpl-7d3f0c2e",
      object: "chat.completion",
      created: 1763312400,
      model: "Qwen/Qwen3-8B",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Hello there!",
            refusal: null,
            annotations: null,
            audio: null,
            function_call: null,
            tool_calls: [],
            reasoning_content: null,
          },
          logprobs: null,
          finish_reason: "stop",
          stop_reason: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: {
        prompt_tokens: 12,
        total_tokens: 15,
        completion_tokens: 3,
        prompt_tokens_details: null,
      },
      prompt_logprobs: null,
      kv_transfer_params: null,
    });
  });
});

describe("n > 1, tool calls and logprobs", () => {
  const lpChat =
    '{"content":[{"token":" hi","logprob":-0.25,"bytes":[32,104,105],"top_logprobs":[{"token":" hi","logprob":-0.25,"bytes":[32,104,105]}]}]}';

  it("chat: a role chunk and a text chunk of choice 1, with logprobs", () => {
    const w = createChunkWriter(chatMeta);
    assert.equal(
      w.role(null, 1),
      'data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":1,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n',
    );
    assert.equal(
      w.delta(" hi", null, null, { index: 1, logprobs: lpChat }),
      `data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":1,"delta":{"content":" hi"},"logprobs":${lpChat},"finish_reason":null}]}\n\n`,
    );
  });

  it("chat: a tool call's first and last steps", () => {
    const w = createChunkWriter(chatMeta);
    const id = "chatcmpl-tool-0123456789abcdef0123456789abcdef";
    const c = { index: 0, logprobs: null };
    assert.equal(
      w.toolCall({ index: 0, head: { id, name: "get_weather" }, arguments: "{" }, null, null, c),
      `data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"id":"${id}","type":"function","index":0,"function":{"name":"get_weather","arguments":"{"}}]},"logprobs":null,"finish_reason":null}]}\n\n`,
    );
    assert.equal(
      w.toolCall({ index: 0, head: null, arguments: '"}' }, "tool_calls", usage, c),
      'data: {"id":"chatcmpl-7d3f0c2e","object":"chat.completion.chunk","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"}"}}]},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3}}\n\n',
    );
  });

  it("completions: a chunk of choice 1 with logprobs and a running usage (every field)", () => {
    const w = createChunkWriter({ ...chatMeta, endpoint: "completions", id: "cmpl-5b1e" });
    const lp =
      '{"text_offset":[4],"token_logprobs":[-0.5],"tokens":[" do"],"top_logprobs":[{" do":-0.5}]}';
    assert.equal(
      w.delta(" do", "length", { ...usage, cachedTokens: 8 }, { index: 1, logprobs: lp }),
      `data: {"id":"cmpl-5b1e","object":"text_completion","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":1,"text":" do","logprobs":${lp},"finish_reason":"length","stop_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3,"prompt_tokens_details":null}}\n\n`,
    );
  });

  it("a plain chat body with a tool call and a text choice", () => {
    const body = completionResponseBody(
      chatMeta,
      [
        {
          index: 0,
          text: null,
          toolCall: { id: "chatcmpl-tool-a", name: "f", arguments: '{"a": 1}' },
          logprobs: null,
          finish: "tool_calls",
        },
        { index: 1, text: "Hi", toolCall: null, logprobs: lpChat, finish: "stop" },
      ],
      usage,
    );
    assert.equal(
      body,
      `{"id":"chatcmpl-7d3f0c2e","object":"chat.completion","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[{"id":"chatcmpl-tool-a","type":"function","function":{"name":"f","arguments":"{\\"a\\": 1}"}}],"reasoning_content":null},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null},{"index":1,"message":{"role":"assistant","content":"Hi","refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[],"reasoning_content":null},"logprobs":${lpChat},"finish_reason":"stop","stop_reason":null}],"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3,"prompt_tokens_details":null},"prompt_logprobs":null,"kv_transfer_params":null}`,
    );
  });

  it("a plain completions body with two choices", () => {
    const body = completionResponseBody(
      { ...chatMeta, endpoint: "completions", id: "cmpl-5b1e" },
      [
        { index: 0, text: " a", toolCall: null, logprobs: null, finish: "length" },
        { index: 1, text: " b", toolCall: null, logprobs: null, finish: "stop" },
      ],
      usage,
    );
    assert.equal(
      body,
      '{"id":"cmpl-5b1e","object":"text_completion","created":1763312400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":"length","stop_reason":null,"prompt_logprobs":null},{"index":1,"text":" b","logprobs":null,"finish_reason":"stop","stop_reason":null,"prompt_logprobs":null}],"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3,"prompt_tokens_details":null},"kv_transfer_params":null}',
    );
  });
});

describe("one chunk writer for both vLLMs", () => {
  /** A later vLLM's chat fields (the vLLM-like upstream's). */
  const LATER: AnswerFields = {
    ...SIM_BACKEND_FIELDS,
    tokenIds: true,
    reasoningField: "reasoning",
  };
  const text = fc.oneof(anyText(6), fc.constantFrom('"', "\\", "\u2028", ""));
  it("a token of choice 0 (written from two strings built once) is choice 1's chunk renumbered, for either API and field set", () => {
    fc.assert(
      fc.property(
        text,
        fc.constantFrom<ChoicesDialect>("chat", "completions"),
        fc.constantFrom(SIM_BACKEND_FIELDS, LATER),
        (t, endpoint, fields) => {
          const w = createChunkWriter({ ...chatMeta, endpoint }, fields);
          const one = w.delta(t, null, null, { index: 1, logprobs: null });
          assert.equal(w.delta(t, null, null), one.replace('"index":1', '"index":0'));
          assert.equal(w.deltaJson(JSON.stringify(t), null, null), w.delta(t, null, null));
        },
      ),
      { seed: 11, numRuns: 200 },
    );
  });

  it("the later vLLM's fields: prompt_token_ids on the role chunk and the body, token_ids on every choice, reasoning", () => {
    const w = createChunkWriter(chatMeta, LATER);
    assert.match(w.role(null), /"finish_reason":null\}\],"prompt_token_ids":null\}\n\n$/);
    assert.match(
      w.delta("!", "stop", null),
      /"finish_reason":"stop","stop_reason":null,"token_ids":null\}\]\}\n\n$/,
    );
    const body = JSON.parse(completionResponseJson(chatMeta, "Hi", "stop", usage, LATER));
    assert.equal(body.choices[0].token_ids, null);
    assert.equal(body.choices[0].message.reasoning, null);
    assert.ok(!("reasoning_content" in body.choices[0].message));
    assert.deepEqual(Object.keys(body).slice(-3), [
      "prompt_logprobs",
      "prompt_token_ids",
      "kv_transfer_params",
    ]);
  });
});
