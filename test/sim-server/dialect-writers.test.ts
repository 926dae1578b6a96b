import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Errors } from "../../src/errors.ts";
import { createMessagesWriter } from "../../src/sim-server/messages-writer.ts";
import type { GenerationSpec } from "../../src/sim-server/prepare-generation.ts";
import { createResponsesEvents } from "../../src/sim-server/responses-events.ts";
import { createResponsesWriter } from "../../src/sim-server/responses-writer.ts";
import type { ChoiceStep } from "../../src/sim-server/track-generation.ts";

/** Seeded: FC_SEED replays a failure (fast-check prints the seed of any failing run). */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

/** The part of a generation the dialect writers read: its id, prompt and one choice. */
const specOf = (toolName: string | null) =>
  ({
    meta: { endpoint: "chat", id: "chatcmpl-7d3f", created: 1763312400, model: "Qwen/Qwen3-8B" },
    promptTokens: new Array<number>(12).fill(0),
    choices: [
      {
        index: 0,
        engineId: "e",
        key: 0,
        toolCall:
          toolName === null ? null : { mode: "auto", name: toolName, pieces: [], tokenIds: [] },
        lengthIsStop: false,
      },
    ],
  }) as unknown as GenerationSpec;

/** Two engine steps: the first of two tokens, the last of one, ending as `finish`. */
const twoSteps = (spec: GenerationSpec, pieces: string[][], finish: "stop" | "length") =>
  pieces.map(
    (p, i): ChoiceStep => ({
      choice: spec.choices[0],
      position: i === 0 ? 0 : 2,
      pieces: p,
      finish: i === pieces.length - 1 ? finish : null,
    }),
  );

const usage = { promptTokens: 12, completionTokens: 3, cachedTokens: 8 };
const TEXT = [[" Hello", " there"], ["!"]];
const ARGS = [['{"city', '":'], ['"Oslo"}']];

/** Each event of a stream, in order. */
const eventsOf = (stream: string) => stream.split(/(?<=\n\n)/);

describe("the simulated backend's Messages writer (vLLM v0.11-era bytes)", () => {
  it("a text answer: message, block, one delta per step with text, stop_sequence and cache reads beside the stop reason", () => {
    const spec = specOf(null);
    const w = createMessagesWriter(spec);
    const stream =
      twoSteps(spec, TEXT, "stop")
        .map((s) => w.step(s))
        .join("") + w.finish(usage, "stop");
    const delta = (t: string) =>
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${t}"}}\n\n`;
    assert.deepEqual(eventsOf(stream), [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"chatcmpl-7d3f","type":"message","role":"assistant","content":[],"model":"Qwen/Qwen3-8B","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":0}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
      delta(" Hello there"),
      delta("!"),
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":4,"cache_read_input_tokens":8,"output_tokens":3}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ]);
    assert.equal(
      w.body(usage, "stop"),
      '{"id":"chatcmpl-7d3f","type":"message","role":"assistant","content":[{"type":"text","text":" Hello there!"}],"model":"Qwen/Qwen3-8B","stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":4,"cache_read_input_tokens":8,"output_tokens":3}}',
    );
    assert.equal(
      w.error(Errors.injected(500)),
      `event: error\ndata: {"type":"error","error":{"type":"api_error","message":${JSON.stringify(Errors.injected(500).message)}}}\n\n`,
    );
  });

  it("a tool call: a tool_use block whose input streams as input_json_delta, whole in the plain answer", () => {
    const spec = specOf("get_weather");
    const w = createMessagesWriter(spec);
    const events = eventsOf(
      twoSteps(spec, ARGS, "stop")
        .map((s) => w.step(s))
        .join(""),
    );
    const start = JSON.parse(events[1].split("data: ")[1]);
    assert.match(start.content_block.id, /^chatcmpl-tool-[0-9a-f]{32}$/);
    assert.deepEqual(start.content_block, {
      type: "tool_use",
      id: start.content_block.id,
      name: "get_weather",
      input: {},
    });
    assert.equal(
      events[2],
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\":"}}\n\n',
    );
    assert.equal(
      w.body(usage, "tool_calls"),
      `{"id":"chatcmpl-7d3f","type":"message","role":"assistant","content":[{"type":"tool_use","id":"${start.content_block.id}","name":"get_weather","input":{"city":"Oslo"}}],"model":"Qwen/Qwen3-8B","stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":4,"cache_read_input_tokens":8,"output_tokens":3}}`,
    );
  });
});

describe("the simulated backend's Responses writer (vLLM v0.11-era bytes)", () => {
  const echo = { instructions: "be brief", tools: [] };

  it("a text answer cut by the length: numbered events, status fields and echoed fields, part logprobs; the stored response is the body", () => {
    const spec = specOf(null);
    const stored: unknown[] = [];
    const w = createResponsesWriter(spec, { echo, completed: (r) => stored.push(r) });
    const stream =
      twoSteps(spec, TEXT, "length")
        .map((s) => w.step(s))
        .join("") + w.finish(usage, "length");
    const resp = /"id":"(resp_[0-9a-f]{32})"/.exec(stream)?.[1];
    const msg = /"id":"(msg_[0-9a-f]{32})"/.exec(stream)?.[1];
    assert.ok(
      resp !== undefined && msg !== undefined,
      "a response id and an item id, new per answer",
    );
    const ev = (type: string, seq: number, rest: string) =>
      `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq},${rest}}\n\n`;
    const response = (status: string, incomplete: string, output: string, u: string) =>
      `{"id":"${resp}","object":"response","created_at":1763312400,"status":"${status}","background":false,"error":null,"incomplete_details":${incomplete},"model":"Qwen/Qwen3-8B","output":${output},"instructions":"be brief","tools":[],"usage":${u}}`;
    const started = response("in_progress", "null", "[]", "null");
    const inPart = `"output_index":0,"item_id":"${msg}","content_index":0`;
    const item = `{"id":"${msg}","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":" Hello there!","annotations":[],"logprobs":[]}]}`;
    const whole = response(
      "incomplete",
      '{"reason":"max_output_tokens"}',
      `[${item}]`,
      '{"input_tokens":12,"input_tokens_details":{"cached_tokens":8},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}',
    );
    assert.deepEqual(eventsOf(stream), [
      ev("response.created", 0, `"response":${started}`),
      ev("response.in_progress", 1, `"response":${started}`),
      ev(
        "response.output_item.added",
        2,
        `"output_index":0,"item":{"id":"${msg}","type":"message","status":"in_progress","role":"assistant","content":[]}`,
      ),
      ev(
        "response.content_part.added",
        3,
        `${inPart},"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`,
      ),
      ev("response.output_text.delta", 4, `${inPart},"delta":" Hello there","logprobs":[]`),
      ev("response.output_text.delta", 5, `${inPart},"delta":"!","logprobs":[]`),
      ev("response.output_text.done", 6, `${inPart},"text":" Hello there!","logprobs":[]`),
      ev(
        "response.content_part.done",
        7,
        `${inPart},"part":{"type":"output_text","text":" Hello there!","annotations":[]}`,
      ),
      ev("response.output_item.done", 8, `"output_index":0,"item":${item}`),
      ev("response.completed", 9, `"response":${whole}`),
    ]);
    assert.equal(w.body(usage, "length"), whole);
    assert.deepEqual(stored, [JSON.parse(whole), JSON.parse(whole)]);
    assert.equal(
      w.error(Errors.injected(500)),
      ev(
        "error",
        10,
        `"code":"500","message":${JSON.stringify(Errors.injected(500).message)},"param":null`,
      ),
    );
  });

  it("a function call: its arguments stream as function_call_arguments deltas and close whole", () => {
    const spec = specOf("get_weather");
    const w = createResponsesWriter(spec, { echo: {}, completed() {} });
    const events = eventsOf(
      twoSteps(spec, ARGS, "stop")
        .map((s) => w.step(s))
        .join(""),
    );
    const fc_ = /"id":"(fc_[0-9a-f]{32})"/.exec(events[2])?.[1];
    const call = /"call_id":"(call_[0-9a-f]{32})"/.exec(events[2])?.[1];
    assert.ok(fc_ !== undefined && call !== undefined);
    const item = (status: string, args: string) =>
      `{"id":"${fc_}","type":"function_call","status":"${status}","call_id":"${call}","name":"get_weather","arguments":${args}}`;
    const ev = (type: string, seq: number, rest: string) =>
      `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq},${rest}}\n\n`;
    assert.deepEqual(events.slice(2), [
      ev("response.output_item.added", 2, `"output_index":0,"item":${item("in_progress", '""')}`),
      ev(
        "response.function_call_arguments.delta",
        3,
        `"output_index":0,"item_id":"${fc_}","delta":"{\\"city\\":"`,
      ),
      ev(
        "response.function_call_arguments.delta",
        4,
        `"output_index":0,"item_id":"${fc_}","delta":"\\"Oslo\\"}"`,
      ),
      ev(
        "response.function_call_arguments.done",
        5,
        `"output_index":0,"item_id":"${fc_}","name":"get_weather","arguments":"{\\"city\\":\\"Oslo\\"}"`,
      ),
      ev(
        "response.output_item.done",
        6,
        `"output_index":0,"item":${item("completed", '"{\\"city\\":\\"Oslo\\"}"')}`,
      ),
    ]);
  });

  it("echoes any request fields after the output exactly as JSON.stringify writes them", () => {
    const own = new Set([
      "id",
      "object",
      "created_at",
      "status",
      "background",
      "error",
      "incomplete_details",
      "model",
      "output",
      "usage",
      "__proto__",
    ]);
    const key = fc.string({ maxLength: 8 }).filter((k) => !own.has(k) && !/^(0|[1-9]\d*)$/.test(k));
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }), (echo) => {
        const events = createResponsesEvents({
          responseId: "resp_1",
          itemId: "msg_1",
          created: 5,
          model: "m",
          echo,
          call: null,
        });
        const object = {
          id: "resp_1",
          object: "response",
          created_at: 5,
          status: "in_progress",
          background: false,
          error: null,
          incomplete_details: null,
          model: "m",
          output: [],
          ...echo,
          usage: null,
        };
        const want = `event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":${JSON.stringify(object)}}\n\n`;
        assert.equal(events.started("response.created", 0), want);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });
});
