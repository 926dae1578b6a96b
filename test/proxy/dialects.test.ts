import assert from "node:assert/strict";
import { test } from "node:test";
import {
  anthropicErrorStatus,
  anthropicErrorType,
  Errors,
  toErrorResponse,
} from "../../src/errors.ts";
import { DIALECT_LIST, DIALECTS, dialectOfPath } from "../../src/proxy/dialects/all-dialects.ts";
import { createSseFramer } from "../../src/proxy/sse-framer.ts";

test("each dialect answers on its own route, and a path under it speaks its envelope", () => {
  assert.deepEqual(
    DIALECT_LIST.map((d) => [d.name, d.path]),
    [
      ["chat", "/v1/chat/completions"],
      ["completions", "/v1/completions"],
      ["messages", "/v1/messages"],
      ["responses", "/v1/responses"],
    ],
  );
  for (const d of DIALECT_LIST) assert.equal(DIALECTS[d.name], d);
  assert.equal(dialectOfPath("/v1/messages/count_tokens").name, "messages");
  assert.equal(dialectOfPath("/v1/responses/resp_1/cancel").name, "responses");
  assert.equal(dialectOfPath("/v1/messagesx").name, "chat", "only a path under the route");
  assert.equal(dialectOfPath("/programs").name, "chat", "every other path: the OpenAI envelope");
  const res = toErrorResponse(Errors.queueFull("full"));
  assert.deepEqual(DIALECTS.messages.errorBody(res), {
    type: "error",
    error: { type: "rate_limit_error", message: "full" },
  });
  assert.equal(DIALECTS.responses.errorBody(res), res.body);
});

test("Anthropic's error table reads both ways: a status's type names that status again", () => {
  for (const status of [400, 401, 403, 404, 413, 429, 500, 504, 529]) {
    const type = anthropicErrorType(status);
    assert.equal(anthropicErrorStatus(type), status, `${status} → ${type} → back`);
  }
  assert.equal(anthropicErrorType(503), "overloaded_error", "maitred's 503 is overloaded");
  assert.equal(anthropicErrorType(502), "api_error");
  assert.equal(anthropicErrorType(422), "invalid_request_error");
  assert.equal(anthropicErrorStatus("toString"), undefined, "no type from the prototype");
  assert.equal(anthropicErrorStatus(42), undefined);
});

test("the one SSE framer: whole events come back as the same buffer, split ones once ended", () => {
  const seen: string[] = [];
  let lines: string[] = [];
  const framer = createSseFramer(
    {
      line: (buf, a, b) => void lines.push(buf.toString("utf8", a, b)),
      end: (_buf, _a, _b, complete) => {
        seen.push(`${lines.join("|")}${complete ? "" : " (unended)"}`);
        lines = [];
      },
    },
    64,
  );
  const whole = Buffer.from("data: a\n\nevent: x\r\ndata: b\r\n\r\n");
  assert.equal(framer.push(whole), whole, "no copy for a chunk of whole events");
  assert.equal(framer.push(Buffer.from("data: c\r")), null, "no event ended yet");
  assert.equal(framer.push(Buffer.from("\n\r\ndata: d"))?.toString(), "data: c\r\n\r\n");
  assert.equal(framer.flush()?.toString(), "data: d");
  assert.deepEqual(seen, ["data: a", "event: x|data: b", "data: c", "data: d (unended)"]);
  assert.equal(framer.overflowed, false);
  const long = Buffer.from(`data: ${"y".repeat(100)}`);
  assert.equal(framer.push(long), long, "past the bound without a boundary: passed on unread");
  assert.equal(framer.overflowed, true);
});
