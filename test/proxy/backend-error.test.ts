import assert from "node:assert/strict";
import { test } from "node:test";
import { backendErrorJson, backendErrorOf } from "../../src/proxy/backend-error.ts";

const envelope = { error: { message: "boom", type: "BadRequestError", param: null, code: 400 } };
const flat = {
  object: "error",
  message: "too long",
  type: "BadRequestError",
  param: "messages",
  code: 400,
};

test("an error is found in the envelope and in the flat shape; anything else is no error", () => {
  assert.deepEqual(backendErrorOf(envelope), envelope.error);
  assert.deepEqual(backendErrorOf(flat), {
    message: "too long",
    type: "BadRequestError",
    param: "messages",
    code: 400,
  });
  assert.equal(backendErrorOf({ detail: "Not Found" }), undefined);
  assert.equal(backendErrorOf({ object: "chat.completion.chunk", choices: [] }), undefined);
});

test("an envelope stays as the backend wrote it, compacted", () => {
  const body = `{ "error": {"message":"boom","type":"BadRequestError","param":null,"code":400}, "x": 1 }`;
  assert.equal(backendErrorJson(400, body), JSON.stringify({ ...envelope, x: 1 }));
});

test("the flat shape moves into the envelope, its fields as written", () => {
  assert.deepEqual(JSON.parse(backendErrorJson(400, Buffer.from(JSON.stringify(flat)))), {
    error: { message: "too long", type: "BadRequestError", param: "messages", code: 400 },
  });
  // Fields it left out are filled as vLLM fills them; no code is made up.
  assert.deepEqual(JSON.parse(backendErrorJson(503, '{"object":"error","message":"busy"}')), {
    error: { message: "busy", type: "ServiceUnavailableError", param: null, code: null },
  });
});

test("FastAPI's detail, other JSON and plain text become the message, with no code", () => {
  const of = (status: number, body: string) => JSON.parse(backendErrorJson(status, body)).error;
  assert.deepEqual(of(404, '{"detail":"Not Found"}'), {
    message: "Not Found",
    type: "NotFoundError",
    param: null,
    code: null,
  });
  const validation = [{ loc: ["body", "messages"], msg: "Field required", type: "missing" }];
  assert.equal(of(422, JSON.stringify({ detail: validation })).message, JSON.stringify(validation));
  assert.equal(of(422, JSON.stringify({ detail: validation })).type, "BadRequestError");
  assert.deepEqual(of(502, "upstream connect error\n"), {
    message: "upstream connect error",
    type: "BadGatewayError",
    param: null,
    code: null,
  });
  assert.equal(of(500, "").message, "Backend answered 500.");
  assert.equal(of(500, "[1,2]").message, "[1,2]");
});
