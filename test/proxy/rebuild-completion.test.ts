import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  type CompletionRebuilder,
  createCompletionRebuilder,
  type RebuildOptions,
} from "../../src/proxy/rebuild-completion.ts";
import {
  completionResponseJson,
  createChunkWriter,
  type ResponseMeta,
  SSE_DONE,
} from "../../src/sim-server/openai-shapes.ts";
import { anyText } from "../util/any-text.ts";

const CHAT: RebuildOptions = { endpoint: "chat", flavour: "vllm", toolCallContent: null };
const LEGACY: RebuildOptions = { endpoint: "completions", flavour: "vllm", toolCallContent: null };

function rebuilder(options: RebuildOptions, seen: number[][] = []): CompletionRebuilder {
  return createCompletionRebuilder(options, {
    onContent: (count, previous) => seen.push([previous, count]),
  });
}

function rebuild(options: RebuildOptions, pieces: (string | Buffer)[]) {
  const r = rebuilder(options);
  for (const p of pieces) r.push(typeof p === "string" ? Buffer.from(p) : p);
  return r.finish();
}

const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;

/** The simulated backend's stream and its own plain answer for the same tokens. */
function simulated(meta: ResponseMeta, tokens: string[]) {
  const w = createChunkWriter(meta);
  const usage = { promptTokens: 7, completionTokens: tokens.length, cachedTokens: null };
  let stream = "";
  tokens.forEach((t, i) => {
    if (i === 0 && meta.endpoint === "chat") stream += w.role(null);
    stream += w.delta(t, i === tokens.length - 1 ? "length" : null, null);
  });
  stream += w.usage(usage) + SSE_DONE;
  return { stream, plain: completionResponseJson(meta, tokens.join(""), "length", usage) };
}

test("the rebuilt answer is byte for byte the simulated backend's own plain answer", () => {
  const tokens = ["Hel", "lo", " wor", "ld ", "\u00e9\u{1f600}", '"q"'];
  for (const endpoint of ["chat", "completions"] as const) {
    const meta = { endpoint, id: "cmpl-1", created: 1700000000, model: "m/x" };
    const { stream, plain } = simulated(meta, tokens);
    const built = rebuild(endpoint === "chat" ? CHAT : LEGACY, [stream]);
    assert.deepEqual(built, { status: 200, body: plain }, endpoint);
  }
});

test("any split of the stream and any SSE line ending give the same answer", () => {
  const meta = { endpoint: "chat" as const, id: "c", created: 1, model: "m" };
  const { stream, plain } = simulated(meta, ["a", "\u00e9\u{1f600}b", "c"]);
  fc.assert(
    fc.property(
      fc.constantFrom("\n", "\r\n", "\r"),
      fc.uniqueArray(fc.nat({ max: 2000 }), { maxLength: 12 }),
      (eol, cuts) => {
        const bytes = Buffer.from(stream.replace(/\n/g, eol));
        const at = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
        const pieces = [0, ...at].map((from, i) => bytes.subarray(from, at[i] ?? bytes.length));
        const built = rebuild(CHAT, pieces);
        assert.equal(built?.body, plain);
      },
    ),
    { seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) },
  );
});

test("n > 1, tool calls joined from their pieces, reasoning and logprobs, per choice", () => {
  const head = { id: "chatcmpl-9", object: "chat.completion.chunk", created: 5, model: "m" };
  const lp = (token: string) => ({ token, logprob: -0.5, bytes: [1], top_logprobs: [] });
  const chunk = (choice: object, extra: object = {}) =>
    data({ ...head, choices: [{ logprobs: null, finish_reason: null, ...choice }], ...extra });
  const stream = [
    chunk({ index: 0, delta: { role: "assistant", content: "" } }),
    chunk({ index: 1, delta: { role: "assistant", content: "" } }),
    chunk({ index: 1, delta: { reasoning_content: "think" }, logprobs: { content: [lp("t")] } }),
    chunk({
      index: 0,
      delta: {
        tool_calls: [
          { id: "call-a", type: "function", index: 0, function: { name: "get", arguments: "" } },
        ],
      },
    }),
    chunk({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"k":' } }] } }),
    chunk({ index: 1, delta: { content: "Hi" }, logprobs: { content: [lp("Hi")] } }),
    chunk({
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: ' "v"}' } }] },
      finish_reason: "tool_calls",
      stop_reason: null,
    }),
    chunk(
      { index: 1, delta: { content: "!" }, finish_reason: "stop", stop_reason: 42 },
      { system_fingerprint: "fp-1" },
    ),
    data({
      ...head,
      choices: [],
      usage: { prompt_tokens: 3, total_tokens: 9, completion_tokens: 6 },
    }),
    SSE_DONE,
  ];
  const seen: number[][] = [];
  const r = rebuilder(CHAT, seen);
  for (const s of stream) r.push(Buffer.from(s));
  const built = r.finish();
  assert.equal(built?.status, 200);
  assert.deepEqual(JSON.parse(built?.body ?? ""), {
    id: "chatcmpl-9",
    object: "chat.completion",
    created: 5,
    model: "m",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [
            { id: "call-a", type: "function", function: { name: "get", arguments: '{"k": "v"}' } },
          ],
          reasoning_content: null,
        },
        logprobs: null,
        finish_reason: "tool_calls",
        stop_reason: null,
      },
      {
        index: 1,
        message: {
          role: "assistant",
          content: "Hi!",
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [],
          reasoning_content: "think",
        },
        logprobs: { content: [lp("t"), lp("Hi")] },
        finish_reason: "stop",
        stop_reason: 42,
      },
    ],
    service_tier: null,
    system_fingerprint: "fp-1",
    usage: { prompt_tokens: 3, total_tokens: 9, completion_tokens: 6, prompt_tokens_details: null },
    prompt_logprobs: null,
    kv_transfer_params: null,
  });
  assert.deepEqual(r.usage, { promptTokens: 3, completionTokens: 6, totalTokens: 9 });
  assert.equal(r.contentEvents, 8, "every event with a choice is one step of content");
  assert.deepEqual(seen.at(-1), [7, 8]);
  const forced = rebuild({ ...CHAT, toolCallContent: "" }, stream);
  assert.equal(JSON.parse(forced?.body ?? "").choices[0].message.content, "");
});

test("legacy completions join text and the four logprob arrays; SGLang's layout keeps matched_stop", () => {
  const head = { id: "cmpl-3", object: "text_completion", created: 2, model: "m" };
  const lp = (t: string, offset: number) => ({
    text_offset: [offset],
    token_logprobs: [-1],
    tokens: [t],
    top_logprobs: [{ [t]: -1 }],
  });
  const stream = [
    data({
      ...head,
      choices: [
        { index: 0, text: "ab", logprobs: lp("ab", 0), finish_reason: null, matched_stop: null },
      ],
    }),
    data({
      ...head,
      choices: [
        { index: 0, text: "c", logprobs: lp("c", 2), finish_reason: "stop", matched_stop: 2 },
      ],
    }),
    data({
      ...head,
      choices: [],
      usage: { prompt_tokens: 1, total_tokens: 3, completion_tokens: 2 },
    }),
  ];
  const built = rebuild({ ...LEGACY, flavour: "sglang" }, stream);
  assert.equal(
    built?.body,
    JSON.stringify({
      id: "cmpl-3",
      object: "text_completion",
      created: 2,
      model: "m",
      choices: [
        {
          index: 0,
          text: "abc",
          logprobs: {
            text_offset: [0, 2],
            token_logprobs: [-1, -1],
            tokens: ["ab", "c"],
            top_logprobs: [{ ab: -1 }, { c: -1 }],
          },
          finish_reason: "stop",
          matched_stop: 2,
        },
      ],
      usage: {
        prompt_tokens: 1,
        total_tokens: 3,
        completion_tokens: 2,
        prompt_tokens_details: null,
      },
    }),
  );
});

test("an error event becomes the answer with its status; a stream with no answer is null", () => {
  const error = { error: { message: "boom", type: "BadRequestError", param: null, code: 400 } };
  const head = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
  const partial = data({ ...head, choices: [{ index: 0, delta: { content: "x" } }] });
  assert.deepEqual(rebuild(CHAT, [partial, data(error), SSE_DONE]), {
    status: 400,
    body: JSON.stringify(error),
  });
  const legacy = { object: "error", message: "m", type: "InternalServerError", code: "x" };
  assert.equal(rebuild(CHAT, [data(legacy)])?.status, 500, "a code that is no status is a 500");
  assert.equal(rebuild(CHAT, [": keep-alive\n\n", SSE_DONE]), null);
  assert.equal(rebuild(CHAT, ["not sse at all"]), null);
});

test("token ids grow per event like logprobs; a stream cut short or an endless event is no answer", () => {
  const head = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
  const step = (content: string, ids: number[], finish: string | null) =>
    data({
      ...head,
      choices: [{ index: 0, delta: { content }, token_ids: ids, finish_reason: finish }],
    });
  const whole = rebuild(CHAT, [step("a", [10], null), step("b", [11, 12], "stop"), SSE_DONE]);
  assert.deepEqual(JSON.parse(whole?.body ?? "").choices[0].token_ids, [10, 11, 12]);
  assert.equal(rebuild(CHAT, [step("a", [10], null)]), null, "no [DONE], no finish reason");
  assert.equal(rebuild(CHAT, [step("a", [10], "length")])?.status, 200, "finished, [DONE] lost");
  const endless = rebuilder(CHAT);
  const piece = Buffer.from(`data: {"x":"${"y".repeat(1 << 20)}`);
  for (let i = 0; i < 17; i++) endless.push(piece);
  endless.push(Buffer.from('"}\n\n'));
  assert.equal(endless.finish(), null, "an event over 16 MiB is not read whole");
});

test("any token texts (quotes, escapes, control characters, astral and separator code points) rebuild exactly, chat and legacy", () => {
  const text = fc.oneof(
    anyText(6),
    fc.constantFrom('"', "\\", '\\"', '","refusal":"x', "\n", "\u2028", "\u0000", "\u{1f600}", ""),
  );
  fc.assert(
    fc.property(fc.array(text, { minLength: 1, maxLength: 12 }), fc.boolean(), (tokens, chat) => {
      const meta = {
        endpoint: chat ? ("chat" as const) : ("completions" as const),
        id: "c",
        created: 1,
        model: "m",
      };
      const { stream, plain } = simulated(meta, tokens);
      assert.equal(rebuild(chat ? CHAT : LEGACY, [stream])?.body, plain);
    }),
    { seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) },
  );
});

test("an event shaped like the token before it but carrying more than one text is read whole", () => {
  const head =
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":';
  const tail = '},"logprobs":null,"finish_reason":null}]}';
  const event = (delta: string) => `data: ${head}${delta}${tail}\n\n`;
  const built = rebuild(CHAT, [
    event('"a"'),
    event('"b"'),
    // Same bytes before and after, but between them two members, not one string.
    event('"c","refusal":"no"'),
    event('"d\\"e"'),
    `data: ${head}"f"},"logprobs":null,"finish_reason":"stop"}]}\n\n`,
    "data: [DONE]\n\n",
  ]);
  const message = JSON.parse(built?.body ?? "").choices[0].message;
  assert.equal(message.content, 'abcd"ef');
  assert.equal(message.refusal, "no");
});

test("per-token arrays keep growing when two events carry the same bytes", () => {
  const event = (finish: string | null) =>
    data({
      id: "c",
      object: "text_completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, text: "x", logprobs: null, finish_reason: finish, token_ids: [7] }],
    });
  const built = rebuild(LEGACY, [event(null), event(null), event(null), event("length"), SSE_DONE]);
  const choice = JSON.parse(built?.body ?? "").choices[0];
  assert.equal(choice.text, "xxxx");
  assert.deepEqual(choice.token_ids, [7, 7, 7, 7]);
});

test("a member kept as its last value follows the last event, whichever way each event was read", () => {
  const head = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
  const token = (content: string, x: number, extra: object = {}) =>
    data({
      ...head,
      x,
      choices: [{ index: 0, delta: { content, ...extra }, logprobs: null, finish_reason: null }],
    });
  for (const middle of [{}, { role: "assistant" }]) {
    const built = rebuild(CHAT, [
      token("a", 1),
      token("b", 2, middle),
      token("c", 1),
      data({ ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }] }),
      SSE_DONE,
    ]);
    const body = JSON.parse(built?.body ?? "");
    assert.equal(body.x, 1, JSON.stringify(middle));
    assert.equal(body.choices[0].message.content, "abc");
  }
});

test("SGLang's null delta members, a chat choice's own text and Unicode spaces around the JSON", () => {
  const head = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
  const sglang = (content: string, finish: string | null) =>
    data({
      ...head,
      choices: [
        {
          index: 0,
          delta: { role: null, content, reasoning_content: null, tool_calls: null },
          logprobs: null,
          finish_reason: finish,
          matched_stop: null,
        },
      ],
    });
  const sg = rebuild({ ...CHAT, flavour: "sglang" }, [
    sglang("x", null),
    sglang("y", null),
    sglang('"z\\', null),
    sglang("!", "stop"),
    SSE_DONE,
  ]);
  assert.equal(JSON.parse(sg?.body ?? "").choices[0].message.content, 'xy"z\\!');

  const withText = (finish: string | null) =>
    data({
      ...head,
      choices: [{ index: 0, delta: { content: "c" }, text: "q", finish_reason: finish }],
    });
  const joined = rebuild(CHAT, [withText(null), withText(null), withText(null), withText("stop")]);
  assert.equal(JSON.parse(joined?.body ?? "").choices[0].message.text, "qqqq");

  const spaced = rebuild(CHAT, [
    `data: \ufeff${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: "a" }, finish_reason: null }] })}\u00a0\n\n`,
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: "b" }, finish_reason: "stop" }] })}\n\n`,
    SSE_DONE,
  ]);
  assert.equal(JSON.parse(spaced?.body ?? "").choices[0].message.content, "ab");
});
