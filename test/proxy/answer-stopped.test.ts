import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { createCompletionRebuilder } from "../../src/proxy/rebuild-completion.ts";
import { createSseRelay } from "../../src/proxy/sse-relay.ts";
import { stoppedOfBody } from "../../src/proxy/usage.ts";

/** Whether an answer is a final one, read three ways: relayed, rebuilt and whole. */

const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
const chunk = (delta: unknown, finish: string | null) =>
  data({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

const TEXT_STOP = [
  chunk({ role: "assistant", content: "" }, null),
  chunk({ content: "Done." }, null),
  chunk({}, "stop"),
  "data: [DONE]\n\n",
];
const TOOL_CALL = [
  chunk({ role: "assistant", content: null }, null),
  chunk(
    {
      tool_calls: [
        { index: 0, id: "t1", type: "function", function: { name: "bash", arguments: "{}" } },
      ],
    },
    null,
  ),
  chunk({}, "tool_calls"),
  "data: [DONE]\n\n",
];
// Some engines end a tool call with "stop": the call itself says it is no final answer.
const TOOL_CALL_STOP = [...TOOL_CALL.slice(0, 2), chunk({}, "stop"), "data: [DONE]\n\n"];
const LENGTH = [chunk({ content: "cut" }, null), chunk({}, "length"), "data: [DONE]\n\n"];
// Text that quotes the keys does not count: they are escaped inside a string.
const QUOTING = [
  chunk({ content: 'say "finish_reason": "stop" and "tool_calls": [1]' }, null),
  chunk({}, "length"),
  "data: [DONE]\n\n",
];

function relayed(events: string[], cuts: number[] = []): boolean {
  const relay = createSseRelay(false, { onContent() {} });
  const all = Buffer.from(events.join(""));
  let from = 0;
  for (const cut of [...cuts, all.length]) {
    relay.push(all.subarray(from, Math.max(from, cut)));
    from = Math.max(from, cut);
  }
  relay.flush();
  return relay.stopped;
}

function rebuilt(events: string[]): boolean {
  const r = createCompletionRebuilder(
    { endpoint: "chat", flavour: "vllm", toolCallContent: null },
    { onContent() {} },
  );
  for (const e of events) r.push(Buffer.from(e));
  r.finish();
  return r.stopped;
}

test("a text answer that stops is final; a tool call, a cut answer or quoted keys are not", () => {
  for (const [events, final] of [
    [TEXT_STOP, true],
    [TOOL_CALL, false],
    [TOOL_CALL_STOP, false],
    [LENGTH, false],
    [QUOTING, false],
  ] as const) {
    assert.equal(relayed([...events]), final, `relayed ${events.join("")}`);
    assert.equal(rebuilt([...events]), final, `rebuilt ${events.join("")}`);
  }
});

test("property: the relay reads the same however the stream is cut into chunks", () => {
  const streams = [TEXT_STOP, TOOL_CALL, TOOL_CALL_STOP, LENGTH];
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: streams.length - 1 }),
      fc.array(fc.nat({ max: 2000 }), { maxLength: 8 }),
      (k, cuts) => {
        const events = streams[k];
        assert.equal(
          relayed(
            events,
            [...cuts].sort((a, b) => a - b),
          ),
          relayed(events),
        );
      },
    ),
    { verbose: 1 },
  );
});

test("a whole answer: every choice stopped with no tool call", () => {
  const body = (choices: unknown) =>
    Buffer.from(JSON.stringify({ object: "chat.completion", choices }));
  assert.equal(
    stoppedOfBody(body([{ finish_reason: "stop", message: { content: "hi", tool_calls: [] } }])),
    true,
  );
  assert.equal(
    stoppedOfBody(
      body([{ finish_reason: "stop", message: { content: null, tool_calls: [{ id: "t" }] } }]),
    ),
    false,
  );
  assert.equal(stoppedOfBody(body([{ finish_reason: "tool_calls", message: {} }])), false);
  assert.equal(stoppedOfBody(body([{ finish_reason: "stop", text: "legacy" }])), true);
  assert.equal(stoppedOfBody(Buffer.from('{"error":{"message":"x"}}')), false);
  assert.equal(stoppedOfBody(Buffer.from("not json")), false);
});

test("with several choices, the answer is final only when every choice stopped", () => {
  const two = (a: string, b: string) => [
    data({ choices: [{ index: 0, delta: { content: "x" }, finish_reason: null }] }),
    data({ choices: [{ index: 0, delta: {}, finish_reason: a }] }),
    data({ choices: [{ index: 1, delta: { content: "y" }, finish_reason: null }] }),
    data({ choices: [{ index: 1, delta: {}, finish_reason: b }] }),
    "data: [DONE]\n\n",
  ];
  assert.equal(relayed(two("stop", "stop")), true);
  assert.equal(relayed(two("length", "stop")), false);
  assert.equal(relayed(two("stop", "length")), false);
  assert.equal(rebuilt(two("length", "stop")), false);
});
