import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  completionResponseJson,
  createChunkWriter,
  type ResponseMeta,
} from "../../src/sim-server/openai-shapes.ts";

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
    const w = createChunkWriter({ ...chatMeta, endpoint: "completion", id: "cmpl-5b1e" });
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
