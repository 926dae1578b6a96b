import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IDENTITY_SOURCES } from "../../src/config/identity-sources.ts";
import type { MaitredError } from "../../src/errors.ts";
import { createCallerResolver } from "../../src/proxy/caller.ts";
import { DIALECTS } from "../../src/proxy/dialects/all-dialects.ts";
import { MAX_JSON_DEPTH, prepareRequest, withPriority } from "../../src/proxy/prepare-request.ts";
import { createResponseHomes } from "../../src/proxy/response-homes.ts";

const ORDER = [...IDENTITY_SOURCES];
const buf = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v));

test("malformed JSON is a 400 invalid_json; a non-object body is a 400 too", () => {
  assert.throws(
    () => prepareRequest(DIALECTS.chat, buf("{nope"), {}, ORDER),
    (e: MaitredError) => e.status === 400 && e.code === "invalid_json",
  );
  assert.throws(
    () => prepareRequest(DIALECTS.chat, buf("[1,2]"), {}, ORDER),
    (e: MaitredError) => e.status === 400,
  );
});

test("an unmodified body is forwarded as the client's own bytes", () => {
  const raw = buf('{"model":"m",  "messages":[]}');
  assert.equal(prepareRequest(DIALECTS.chat, raw, {}, ORDER, null, "as-client").body, raw);
  const streamed = buf('{"model":"m",  "stream":true,"stream_options":{"include_usage":true}}');
  assert.equal(prepareRequest(DIALECTS.chat, streamed, {}, ORDER).body, streamed);
});

describe("the engine order's priority", () => {
  const chat = buf(
    '{"priority":3,"model":"m","messages":[{"role":"user","content":"a \\"priority\\":1"}],"program_id":"a"}',
  );

  test("replaces the client's own member, once, and keeps every other byte", () => {
    const req = prepareRequest(DIALECTS.chat, chat, {}, ORDER, null, "as-client");
    const out = withPriority(req, -42).toString();
    // The text's quotes are escaped: only a top-level member matches.
    assert.equal(out.match(/"priority":/g)?.length, 1);
    assert.equal(out.includes('"priority":3'), false);
    assert.deepEqual(JSON.parse(out), {
      model: "m",
      messages: [{ role: "user", content: 'a "priority":1' }],
      priority: -42,
    });
    assert.ok(out.includes('"messages":[{"role":"user","content":"a \\"priority\\":1"}]'));
  });

  test("is added where the client sent none, on chat, completions and responses", () => {
    for (const [dialect, body] of [
      [DIALECTS.chat, { model: "m", messages: [] }],
      [DIALECTS.completions, { model: "m", prompt: "p" }],
      [DIALECTS.responses, { model: "m", input: "i" }],
    ] as const) {
      const req = prepareRequest(dialect, buf(body), {}, ORDER, null, "as-client");
      assert.deepEqual(JSON.parse(withPriority(req, 7).toString()), { ...body, priority: 7 });
    }
  });

  test("never goes on Messages, and nothing is written where the backend takes none", () => {
    const messages = buf({ model: "m", max_tokens: 4, messages: [], priority: 2 });
    const req = prepareRequest(DIALECTS.messages, messages, {}, ORDER, null, "as-client");
    assert.equal(withPriority(req, 7), req.body);
    const plain = prepareRequest(DIALECTS.chat, chat, {}, ORDER, null, "as-client");
    assert.equal(withPriority(plain, null), plain.body);
  });
});

test("a plain request is streamed from the backend and marked for rebuilding", () => {
  const p = prepareRequest(DIALECTS.chat, buf({ model: "m", messages: [] }), {}, ORDER);
  assert.equal(p.stream, false, "the client still gets what it asked for");
  assert.deepEqual(p.rebuild, { toolCallContent: null });
  const sent = JSON.parse(p.body.toString());
  assert.equal(sent.stream, true);
  assert.deepEqual(sent.stream_options, { include_usage: true });
  const forced = prepareRequest(
    DIALECTS.chat,
    buf({ stream: false, tools: [{}], tool_choice: "required" }),
    {},
    ORDER,
  );
  assert.deepEqual(forced.rebuild, { toolCallContent: "" });
  const named = { type: "function", function: { name: "f" } };
  assert.deepEqual(prepareRequest(DIALECTS.chat, buf({ tool_choice: named }), {}, ORDER).rebuild, {
    toolCallContent: "",
  });
});

test("requests a stream would change go as the client sent them", () => {
  for (const body of [
    { stream_options: { include_usage: true } },
    { prompt_logprobs: 1 },
    { use_beam_search: true },
    { best_of: 2 },
  ]) {
    const raw = buf(body);
    const p = prepareRequest(DIALECTS.completions, raw, {}, ORDER);
    assert.equal(p.rebuild, null, JSON.stringify(body));
    assert.equal(p.body, raw, JSON.stringify(body));
  }
  const off = prepareRequest(DIALECTS.chat, buf({ messages: [] }), {}, ORDER, null, "as-client");
  assert.equal(off.rebuild, null);
});

test("streaming without include_usage gets it added and remembers the client did not ask", () => {
  const p = prepareRequest(
    DIALECTS.chat,
    buf({ model: "m", stream: true, stream_options: { continuous_usage_stats: false } }),
    {},
    ORDER,
  );
  assert.equal(p.stream, true);
  assert.equal(p.clientWantsUsage, false);
  assert.deepEqual(JSON.parse(p.body.toString()).stream_options, {
    continuous_usage_stats: false,
    include_usage: true,
  });
});

test("a client that asked for usage keeps its body untouched", () => {
  const raw = buf({ model: "m", stream: true, stream_options: { include_usage: true } });
  const p = prepareRequest(DIALECTS.chat, raw, {}, ORDER);
  assert.equal(p.clientWantsUsage, true);
  assert.equal(p.body, raw);
});

test("the forwarded body no longer carries program_id", () => {
  const p = prepareRequest(
    DIALECTS.chat,
    buf({ model: "m", program_id: "p1", messages: [] }),
    {},
    ORDER,
  );
  assert.equal(p.identity.programId, "p1");
  assert.equal(JSON.parse(p.body.toString()).program_id, undefined);
});

test("message sizes: strings, text parts and tool calls for chat; prompts for completions", () => {
  const chat = {
    messages: [
      { role: "system", content: "12345" },
      {
        role: "user",
        content: [
          { type: "text", text: "abc" },
          { type: "text", text: "de" },
        ],
      },
      { role: "assistant", content: null, tool_calls: [{ id: "1" }] },
    ],
  };
  assert.deepEqual(DIALECTS.chat.messageChars(chat), [5, 5, JSON.stringify([{ id: "1" }]).length]);
  assert.deepEqual(DIALECTS.completions.messageChars({ prompt: "hello" }), [5]);
  assert.deepEqual(DIALECTS.completions.messageChars({ prompt: ["ab", "cde"] }), [2, 3]);
  assert.deepEqual(DIALECTS.completions.messageChars({ prompt: [1, 2, 3] }), ["[1,2,3]".length]);
  assert.deepEqual(DIALECTS.chat.messageChars({ messages: "nope" }), []);
});

test("x-maitred-max-wait-ms must be a non-negative number", () => {
  assert.equal(
    prepareRequest(DIALECTS.chat, buf({}), { "x-maitred-max-wait-ms": "250" }, ORDER).maxWaitMs,
    250,
  );
  assert.throws(
    () => prepareRequest(DIALECTS.chat, buf({}), { "x-maitred-max-wait-ms": "soon" }, ORDER),
    (e: MaitredError) => e.status === 400 && e.param === "x-maitred-max-wait-ms",
  );
});

test("a body nested deeper than the limit is a 400 before anything else reads it", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  const body = (depth: number) =>
    buf(`{"model":"m","messages":[{"role":"user","content":${nested(depth)}}]}`);
  // The body itself, `messages`, a message and `content` are four levels.
  assert.doesNotThrow(() => prepareRequest(DIALECTS.chat, body(MAX_JSON_DEPTH - 3), {}, ORDER));
  for (const depth of [MAX_JSON_DEPTH - 2, 5_000, 100_000]) {
    assert.throws(
      () => prepareRequest(DIALECTS.chat, body(depth), {}, ORDER),
      (e: MaitredError) => e.status === 400 && e.code === "json_too_deep",
      String(depth),
    );
  }
});

test("a program id that is not valid Unicode is a 400, at the top level or in extra_body", () => {
  for (const raw of [
    '{"program_id":"a\\ud800b","messages":[]}',
    '{"extra_body":{"program_id":"\\udfff"},"messages":[]}',
  ]) {
    assert.throws(
      () => prepareRequest(DIALECTS.chat, buf(raw), {}, ORDER),
      (e: MaitredError) => e.status === 400 && e.code === "program_id_invalid",
      raw,
    );
  }
  const p = prepareRequest(
    DIALECTS.chat,
    buf({ messages: [], program_id: "agent-\u{1f600}" }),
    {},
    ORDER,
  );
  assert.equal(p.identity.programId, "agent-\u{1f600}", "a whole surrogate pair is fine");
});

describe("a Responses request continuing a stored response, with two tenants", () => {
  const callers = createCallerResolver({
    tenants: { alpha: "default", beta: "default" },
    apiKeys: { "sk-alpha": "alpha", "sk-beta": "beta" },
    trustTenantHeader: false,
  });
  const homes = createResponseHomes();
  homes.record("resp_alpha", {
    backendId: "b1",
    programKey: "alpha\u001fchain",
    programId: "chain",
    owner: "alpha",
  });
  homes.record("resp_anon", {
    backendId: "b1",
    programKey: "solo",
    programId: "solo",
    owner: null,
  });
  const continuing = (id: string, key: string | null) =>
    prepareRequest(
      DIALECTS.responses,
      buf({ model: "m", input: "go on", previous_response_id: id }),
      key === null ? {} : { authorization: `Bearer ${key}` },
      ORDER,
      null,
      "always",
      callers,
      null,
      homes,
    );

  test("its own tenant continues it: not foreign, and the chain's program is followed", () => {
    const p = continuing("resp_alpha", "sk-alpha");
    assert.equal(p.previousResponseForeign, false);
    assert.equal(p.programKey, "alpha\u001fchain");
  });

  test("another tenant or an anonymous caller is foreign to it, and learns no program from it: as for an unknown id", () => {
    for (const key of ["sk-beta", null]) {
      const p = continuing("resp_alpha", key);
      const unknown = continuing("resp_never_made", key);
      assert.equal(p.previousResponseForeign, true, `key ${key}: got reachable, want foreign`);
      assert.equal(p.previousResponseId, "resp_alpha");
      assert.equal(p.programKey, unknown.programKey, `key ${key}: identity differs from unknown`);
      assert.equal(p.programKey, null);
    }
  });

  test("a response made anonymously is continued by a tenant as before", () => {
    const p = continuing("resp_anon", "sk-beta");
    assert.equal(p.previousResponseForeign, false);
    assert.equal(p.programKey, "beta\u001fsolo", "the chain's id, in the caller's own scope");
  });

  test("an id maitred never relayed is not foreign: it goes to the backends as before", () => {
    assert.equal(continuing("resp_never_made", "sk-beta").previousResponseForeign, false);
  });
});
