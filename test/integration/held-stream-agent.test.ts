import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { HOLD_KEEPALIVE_MS } from "../../src/proxy/held-stream.ts";
import { withHeldRouter } from "./helpers/held-router.ts";

/**
 * Held streams of the agent APIs (helpers/held-router.ts holds every request): a held Messages
 * stream is kept alive with the API's own `ping` event, a held Responses stream with SSE
 * comments, and a hold that ends in an error ends each stream with its API's error event.
 */

async function readSome(res: Response, until: RegExp): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!until.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

test("a held Messages stream is kept alive with ping events, and a hold past its max wait ends it with an overloaded_error event the Anthropic SDK raises", async () => {
  await withHeldRouter(async (router) => {
    const client = new Anthropic({ baseURL: router.url, apiKey: "k", maxRetries: 0 });
    const { data: stream, response } = await client.messages
      .create(
        { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }], stream: true },
        { headers: { "x-claude-code-session-id": "held-cc", "x-maitred-max-wait-ms": "40000" } },
      )
      .withResponse();
    assert.equal(response.headers.get("x-maitred-held"), "true");
    const read = (async () => {
      for await (const _ of stream);
    })();
    router.clock.advance(HOLD_KEEPALIVE_MS);
    router.clock.advance(40_000 - HOLD_KEEPALIVE_MS);
    await assert.rejects(read, (err: unknown) => {
      assert.ok(err instanceof Anthropic.APIError, String(err));
      assert.equal((err.error as { error?: { type?: string } })?.error?.type, "overloaded_error");
      return true;
    });
  });
});

test("the bytes of a held Messages stream: ping events while held, then the error event, no [DONE]", async () => {
  await withHeldRouter(async (router) => {
    const res = await fetch(`${router.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-maitred-max-wait-ms": "20000" },
      body: JSON.stringify({ model: "m", max_tokens: 4, stream: true, messages: [], metadata: {} }),
    });
    assert.equal(res.status, 200);
    const first = await readSome(res, /event: ping/);
    assert.match(first, /^: maitred held position=1/);
    assert.match(first, /event: ping\ndata: \{"type": "ping"\}\n\n/);
    router.clock.advance(20_000);
    const rest = await readSome(res, /event: error\ndata: .*\n\n/);
    const m = /event: error\ndata: (.*)\n\n/.exec(rest);
    assert.ok(m, `an error event in ${rest}`);
    const doc = JSON.parse(m[1]);
    assert.equal(doc.type, "error");
    assert.equal(doc.error.type, "overloaded_error");
    assert.doesNotMatch(rest, /\[DONE\]/);
  });
});

test("a held Responses stream is kept alive with comments and ends in the Responses error event", async () => {
  await withHeldRouter(async (router) => {
    const res = await fetch(`${router.url}/v1/responses`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "session-id": "held-codex",
        "x-maitred-max-wait-ms": "20000",
      },
      body: JSON.stringify({ model: "m", input: "hi", stream: true, store: false }),
    });
    const first = await readSome(res, /: maitred held/);
    assert.doesNotMatch(first, /event: ping/);
    router.clock.advance(20_000);
    const rest = await readSome(res, /event: error\ndata: .*\n\n/);
    const doc = JSON.parse((/event: error\ndata: (.*)\n\n/.exec(rest) as RegExpExecArray)[1]);
    assert.deepEqual(
      { type: doc.type, code: doc.code },
      { type: "error", code: "paused_too_long" },
    );
    assert.equal(typeof doc.message, "string");
  });
});
