import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { DIALECTS } from "../../src/proxy/dialects/all-dialects.ts";

/** Neither dialect's rebuilt answer depends on the backend type or a tool choice. */
const REBUILD = { flavour: "vllm", toolCallContent: null } as const;

const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

const MESSAGES_TOOL = [
  ev("message_start", {
    type: "message_start",
    message: {
      id: "m1",
      type: "message",
      role: "assistant",
      content: [],
      usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 0 },
    },
  }),
  ev("ping", { type: "ping" }),
  ev("content_block_start", {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: "" },
  }),
  ev("content_block_delta", {
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text: "Let me look." },
  }),
  ev("content_block_stop", { type: "content_block_stop", index: 0 }),
  ev("content_block_start", {
    type: "content_block_start",
    index: 1,
    content_block: { type: "tool_use", id: "t1", name: "ls", input: {} },
  }),
  ev("content_block_delta", {
    type: "content_block_delta",
    index: 1,
    delta: { type: "input_json_delta", partial_json: '{"path":' },
  }),
  ev("content_block_delta", {
    type: "content_block_delta",
    index: 1,
    delta: { type: "input_json_delta", partial_json: '"."}' },
  }),
  ev("content_block_stop", { type: "content_block_stop", index: 1 }),
  ev("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 7 },
  }),
  ev("message_stop", { type: "message_stop" }),
].join("");

const RESPONSES_TEXT = [
  ev("response.created", {
    type: "response.created",
    sequence_number: 0,
    response: { id: "resp_1", status: "in_progress", output: [] },
  }),
  ev("response.output_item.added", {
    type: "response.output_item.added",
    item: { type: "message" },
  }),
  ev("response.output_text.delta", { type: "response.output_text.delta", delta: "Hi" }),
  ev("response.output_text.delta", { type: "response.output_text.delta", delta: " there" }),
  ev("response.completed", {
    type: "response.completed",
    response: {
      id: "resp_1",
      object: "response",
      status: "completed",
      output: [{ type: "message", content: [{ type: "output_text", text: "Hi there" }] }],
      usage: {
        input_tokens: 5,
        input_tokens_details: { cached_tokens: 2 },
        output_tokens: 2,
        total_tokens: 7,
      },
    },
  }),
].join("");

function relayIn(api: "messages" | "responses", text: string, cuts: number[]) {
  const bytes = Buffer.from(text);
  const relay = DIALECTS[api].relay(true, { onContent() {} });
  const out: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    const piece = relay.push(bytes.subarray(at, cut));
    if (piece) out.push(Buffer.from(piece));
    at = cut;
  }
  const rest = relay.flush();
  if (rest) out.push(rest);
  return { relay, out: Buffer.concat(out).toString() };
}

test("a Messages stream that ends in tool_use: bytes unchanged, two token events, the cache reads in the prompt, not final", () => {
  const { relay, out } = relayIn("messages", MESSAGES_TOOL, []);
  assert.equal(out, MESSAGES_TOOL);
  assert.equal(relay.contentEvents, 3);
  assert.deepEqual(relay.usage, {
    promptTokens: 100,
    completionTokens: 7,
    totalTokens: 107,
    cachedTokens: 90,
  });
  assert.equal(relay.stopped, false);
});

test("a Messages stream that ends end_turn without a tool is final; with \\r\\n line ends too", () => {
  const text = MESSAGES_TOOL.replace(/"tool_use","id"/, '"text","id"').replace(
    '"stop_reason":"tool_use"',
    '"stop_reason":"end_turn"',
  );
  for (const t of [text, text.replaceAll("\n", "\r\n")]) {
    const { relay, out } = relayIn("messages", t, []);
    assert.equal(out, t);
    assert.equal(relay.stopped, true);
    assert.equal(relay.usage?.completionTokens, 7);
  }
});

test("a Responses stream: its id, usage and a final answer, whatever the chunking (property)", () => {
  const len = Buffer.byteLength(RESPONSES_TEXT);
  fc.assert(
    fc.property(fc.uniqueArray(fc.integer({ min: 1, max: len - 1 }), { maxLength: 6 }), (raw) => {
      const cuts = [...raw].sort((a, b) => a - b);
      const { relay, out } = relayIn("responses", RESPONSES_TEXT, cuts);
      assert.equal(out, RESPONSES_TEXT, `cuts ${cuts}`);
      assert.equal(relay.responseId, "resp_1");
      assert.equal(relay.contentEvents, 2);
      assert.deepEqual(relay.usage, {
        promptTokens: 5,
        completionTokens: 2,
        totalTokens: 7,
        cachedTokens: 2,
      });
      assert.equal(relay.stopped, true);
    }),
    { verbose: true },
  );
});

test("the rebuilt plain Message joins text and parses the tool input; the rebuilt response is the completed one", () => {
  const m = DIALECTS.messages.rebuild(REBUILD, { onContent() {} });
  m.push(Buffer.from(MESSAGES_TOOL));
  const built = m.finish();
  assert.equal(built?.status, 200);
  const msg = JSON.parse(built?.body ?? "{}");
  assert.equal(msg.stop_reason, "tool_use");
  assert.deepEqual(msg.content, [
    { type: "text", text: "Let me look." },
    { type: "tool_use", id: "t1", name: "ls", input: { path: "." } },
  ]);
  assert.equal(msg.usage.output_tokens, 7);
  assert.equal(msg.usage.cache_read_input_tokens, 90);

  const r = DIALECTS.responses.rebuild(REBUILD, { onContent() {} });
  r.push(Buffer.from(RESPONSES_TEXT));
  const resp = JSON.parse(r.finish()?.body ?? "{}");
  assert.equal(resp.id, "resp_1");
  assert.equal(resp.status, "completed");
});

test("an error event becomes the plain answer with its status, in the dialect's envelope", () => {
  const m = DIALECTS.messages.rebuild(REBUILD, { onContent() {} });
  m.push(
    Buffer.from(
      ev("error", { type: "error", error: { type: "overloaded_error", message: "busy" } }),
    ),
  );
  const built = m.finish();
  assert.equal(built?.status, 529);
  assert.equal(JSON.parse(built?.body ?? "{}").error.type, "overloaded_error");

  const r = DIALECTS.responses.rebuild(REBUILD, { onContent() {} });
  r.push(Buffer.from(ev("error", { type: "error", code: "503", message: "down", param: null })));
  const rb = r.finish();
  assert.equal(rb?.status, 503);
  assert.equal(JSON.parse(rb?.body ?? "{}").error.message, "down");
});

test("a stream cut before its end rebuilds nothing (the proxy answers 502)", () => {
  const m = DIALECTS.messages.rebuild(REBUILD, { onContent() {} });
  m.push(Buffer.from(MESSAGES_TOOL.slice(0, MESSAGES_TOOL.indexOf("event: message_delta"))));
  assert.equal(m.finish(), null);
  const r = DIALECTS.responses.rebuild(REBUILD, { onContent() {} });
  r.push(Buffer.from(RESPONSES_TEXT.slice(0, RESPONSES_TEXT.indexOf("event: response.completed"))));
  assert.equal(r.finish(), null);
});
