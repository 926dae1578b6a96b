import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  answerEvents,
  answerText,
  plainAnswer,
  UPSTREAM_FIELDS,
} from "../../../src/bench/upstream/answer-events.ts";
import type { Api, ChatRequest } from "../../../src/bench/upstream/upstream-request.ts";
import { createMessagesWriter } from "../../../src/sim-server/messages-writer.ts";
import {
  createChunkWriter,
  SSE_DONE,
  type UsageCounts,
} from "../../../src/sim-server/openai-shapes.ts";
import type { GenerationSpec } from "../../../src/sim-server/prepare-generation.ts";
import { createResponsesWriter } from "../../../src/sim-server/responses-writer.ts";
import type { ChoiceStep } from "../../../src/sim-server/track-generation.ts";

/** Seeded: FC_SEED replays a failure (fast-check prints the seed of any failing run). */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const ID = "chatcmpl-0123456789abcdef";
const CREATED = 1_764_000_000;
const MODEL = "meta-llama/Llama-3.1-8B-Instruct";

/** Token `i`'s text, as the upstream writes it. */
const tokenText = (i: number) => answerText(i + 1).slice(answerText(i).length);

const upstreamStream = (req: ChatRequest) => {
  const events = answerEvents(ID, CREATED, MODEL, req);
  return Array.from({ length: events.total }, (_, k) => events.event(k)).join("");
};

/** The part of a generation the dialect writers read: one text choice, its id, its prompt. */
const specOf = (req: ChatRequest) =>
  ({
    meta: { endpoint: "chat", id: ID, created: CREATED, model: MODEL },
    promptTokens: new Array<number>(req.promptTokens).fill(0),
    choices: [{ index: 0, engineId: "e", key: 0, toolCall: null, lengthIsStop: false }],
  }) as unknown as GenerationSpec;

/** The steps the engine would give: one token each, the last cut by the length. */
const stepsOf = (spec: GenerationSpec, n: number): ChoiceStep[] =>
  Array.from({ length: n }, (_, i) => ({
    choice: spec.choices[0],
    position: i,
    pieces: [tokenText(i)],
    finish: i === n - 1 ? "length" : null,
  }));

const usageOf = (req: ChatRequest): UsageCounts => ({
  promptTokens: req.promptTokens,
  completionTokens: req.tokens,
  cachedTokens: null,
});

/** The simulated backend's answer to the same request, written with the upstream's fields. */
function simStream(req: ChatRequest): string {
  const usage = usageOf(req);
  if (req.api === "chat") {
    const w = createChunkWriter(
      { endpoint: "chat", id: ID, created: CREATED, model: MODEL },
      UPSTREAM_FIELDS,
    );
    let out = w.role(null);
    for (let i = 0; i < req.tokens; i++)
      out += w.delta(tokenText(i), i === req.tokens - 1 ? "length" : null, null);
    return out + (req.includeUsage ? w.usage(usage) : "") + SSE_DONE;
  }
  const spec = specOf(req);
  const writer =
    req.api === "messages"
      ? createMessagesWriter(spec, UPSTREAM_FIELDS)
      : createResponsesWriter(spec, { echo: {}, completed() {} }, UPSTREAM_FIELDS);
  const steps = stepsOf(spec, req.tokens).map((s) => writer.step(s));
  return steps.join("") + writer.finish(usage, "length");
}

function simPlain(req: ChatRequest): string {
  const spec = specOf(req);
  const writer =
    req.api === "messages"
      ? createMessagesWriter(spec, UPSTREAM_FIELDS)
      : createResponsesWriter(spec, { echo: {}, completed() {} }, UPSTREAM_FIELDS);
  for (const s of stepsOf(spec, req.tokens)) writer.step(s);
  return writer.body(usageOf(req), "length");
}

/** The Responses ids are each writer's own (`resp_…`, `msg_…`): the rest must match. */
const idsAside = (text: string) => text.replace(/"(resp|msg)_[^"]*"/g, '"$1_…"');

const request = fc.record({
  api: fc.constantFrom<Api>("chat", "messages", "responses"),
  tokens: fc.integer({ min: 1, max: 24 }),
  stream: fc.constant(true),
  includeUsage: fc.boolean(),
  promptTokens: fc.integer({ min: 1, max: 5000 }),
});

describe("the vLLM-like upstream writes with the simulated backend's writers", () => {
  it("a streamed answer in each API is the byte sequence the simulated backend's writer makes of the same tokens (ids aside)", () => {
    fc.assert(
      fc.property(request, (r) => {
        const req = { ...r, includeUsage: r.api !== "chat" || r.includeUsage };
        assert.equal(idsAside(upstreamStream(req)), idsAside(simStream(req)));
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it("a plain Messages or Responses answer is the simulated backend writer's body of the same tokens (ids aside)", () => {
    for (const api of ["messages", "responses"] as const) {
      const req = { api, tokens: 7, stream: false, includeUsage: true, promptTokens: 30 };
      assert.equal(idsAside(plainAnswer(ID, CREATED, MODEL, req)), idsAside(simPlain(req)));
    }
  });
});

describe("the vLLM-like upstream's bytes", () => {
  const two = (api: Api) => {
    const req = { api, tokens: 2, stream: true, includeUsage: true, promptTokens: 5 };
    const events = answerEvents("chatcmpl-1", 1_700_000_000, "m", req);
    const all = Array.from({ length: events.total }, (_, k) => events.event(k));
    return { all, plain: plainAnswer("chatcmpl-1", 1_700_000_000, "m", req) };
  };
  const head =
    '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m"';

  it("chat: the role, each token with token_ids, the last with its finish and stop reasons, the usage, [DONE]; the plain answer with every null", () => {
    const { all, plain } = two("chat");
    assert.deepEqual(all, [
      `data: ${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}\n\n`,
      `data: ${head},"choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null,"token_ids":null}]}\n\n`,
      `data: ${head},"choices":[{"index":0,"delta":{"content":" file"},"logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":null}]}\n\n`,
      `data: ${head},"choices":[],"usage":{"prompt_tokens":5,"total_tokens":7,"completion_tokens":2}}\n\n`,
      "data: [DONE]\n\n",
    ]);
    assert.equal(
      plain,
      '{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":" the file","refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[],"reasoning":null},"logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":null}],"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":5,"total_tokens":7,"completion_tokens":2,"prompt_tokens_details":null},"prompt_logprobs":null,"prompt_token_ids":null,"kv_transfer_params":null}',
    );
  });

  it("messages: the message and block around one delta per token, no stop_sequence beside the stop reason", () => {
    const { all, plain } = two("messages");
    const delta = (t: string) =>
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${t}"}}\n\n`;
    assert.deepEqual(all, [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"chatcmpl-1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":0}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
      delta(" the"),
      delta(" file"),
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":5,"output_tokens":2}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ]);
    assert.equal(
      plain,
      '{"id":"chatcmpl-1","type":"message","role":"assistant","content":[{"type":"text","text":" the file"}],"model":"m","stop_reason":"max_tokens","usage":{"input_tokens":5,"output_tokens":2}}',
    );
  });

  it("responses: numbered events around one delta per token, a response with no status fields, a plain usage without details", () => {
    const { all, plain } = two("responses");
    const started =
      '{"id":"resp_chatcmpl-1","object":"response","created_at":1700000000,"status":"in_progress","model":"m","output":[],"usage":null}';
    const inPart = '"output_index":0,"item_id":"msg_chatcmpl-1","content_index":0';
    const item =
      '{"id":"msg_chatcmpl-1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":" the file","annotations":[]}]}';
    const ev = (type: string, seq: number, rest: string) =>
      `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq},${rest}}\n\n`;
    assert.deepEqual(all, [
      ev("response.created", 0, `"response":${started}`),
      ev("response.in_progress", 1, `"response":${started}`),
      ev(
        "response.output_item.added",
        2,
        '"output_index":0,"item":{"id":"msg_chatcmpl-1","type":"message","status":"in_progress","role":"assistant","content":[]}',
      ),
      ev(
        "response.content_part.added",
        3,
        `${inPart},"part":{"type":"output_text","text":"","annotations":[]}`,
      ),
      ev("response.output_text.delta", 4, `${inPart},"delta":" the","logprobs":[]`),
      ev("response.output_text.delta", 5, `${inPart},"delta":" file","logprobs":[]`),
      ev("response.output_text.done", 6, `${inPart},"text":" the file","logprobs":[]`),
      ev(
        "response.content_part.done",
        7,
        `${inPart},"part":{"type":"output_text","text":" the file","annotations":[]}`,
      ),
      ev("response.output_item.done", 8, `"output_index":0,"item":${item}`),
      ev(
        "response.completed",
        9,
        `"response":{"id":"resp_chatcmpl-1","object":"response","created_at":1700000000,"status":"incomplete","model":"m","output":[${item}],"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":7}}`,
      ),
    ]);
    assert.equal(
      plain,
      `{"id":"resp_chatcmpl-1","object":"response","created_at":1700000000,"status":"incomplete","model":"m","output":[${item}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}`,
    );
  });
});
