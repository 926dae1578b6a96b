import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runTokenLoad, tokenRequestBody } from "../../../src/bench/overhead/proxy-bench-kit.ts";
import { answerEvents, answerText } from "../../../src/bench/upstream/answer-events.ts";
import {
  API_PATHS,
  type ChatRequest,
  DEFAULT_MODEL,
} from "../../../src/bench/upstream/upstream-request.ts";
import {
  startVllmLikeUpstream,
  type VllmLikeUpstream,
} from "../../../src/bench/upstream/vllm-like-server.ts";

const chat = (tokens: number, includeUsage: boolean): ChatRequest => ({
  api: "chat",
  tokens,
  stream: true,
  includeUsage,
  promptTokens: 10,
});

describe("the vLLM-like upstream's events", () => {
  it("a streamed chat answer is the role, one event per token, usage when asked, [DONE]", () => {
    const e = answerEvents("id", 1, DEFAULT_MODEL, chat(3, true));
    assert.equal(e.total, 3 + 3, "role + 3 tokens + usage + [DONE]");
    const all = Array.from({ length: e.total }, (_, k) => e.event(k));
    assert.match(all[0], /"role":"assistant"/);
    assert.match(all[3], /"finish_reason":"length"/);
    assert.match(all[4], /"usage":\{"prompt_tokens":10,"total_tokens":13,"completion_tokens":3\}/);
    assert.equal(all[5], "data: [DONE]\n\n");
    const text = all
      .slice(1, 4)
      .map((ev) => JSON.parse(ev.slice("data: ".length)).choices[0].delta.content)
      .join("");
    assert.equal(text, answerText(3));
  });

  it("without include_usage a chat stream has no usage event", () => {
    assert.equal(answerEvents("id", 1, DEFAULT_MODEL, chat(3, false)).total, 3 + 2);
  });

  it("the agent APIs write their own events around the tokens", () => {
    const messages = answerEvents("id", 1, DEFAULT_MODEL, { ...chat(2, true), api: "messages" });
    const first = messages.event(0);
    assert.match(first, /^event: message_start\n/, first);
    assert.match(messages.event(messages.total - 1), /message_stop/);
  });
});

describe("the vLLM-like upstream over HTTP", () => {
  let upstream: VllmLikeUpstream;
  before(async () => {
    upstream = await startVllmLikeUpstream({ port: 0 });
  });
  after(() => upstream.close());

  it("answers a plain request with exactly the tokens asked for, and counts it", async () => {
    const res = await fetch(`${upstream.url}${API_PATHS.chat}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: tokenRequestBody("p-1", false, 5),
    });
    const body = (await res.json()) as {
      choices: { message: { content: string }; finish_reason: string }[];
      usage: { completion_tokens: number };
    };
    assert.equal(res.status, 200);
    assert.equal(body.choices[0].message.content, answerText(5));
    assert.equal(body.choices[0].finish_reason, "length");
    assert.equal(body.usage.completion_tokens, 5);
  });

  it("a closed loop of a fixed count of streamed requests reads every event it counts", async () => {
    const s0 = upstream.stats();
    const r = await runTokenLoad({
      url: upstream.url,
      stream: true,
      tokens: 4,
      connections: 2,
      seconds: 0,
      requests: 3,
    });
    const s1 = upstream.stats();
    assert.equal(r.n, 6, "2 connections × 3 requests");
    assert.equal(s1.requests - s0.requests, 6);
    // No stream_options in the body: role + 4 tokens + [DONE] per answer.
    assert.equal(s1.events - s0.events, 6 * 6);
    assert.ok(r.bytes > 0);
  });

  it("the request bodies put the program id where each API's clients put it", () => {
    assert.equal(JSON.parse(tokenRequestBody("p", true, 8)).program_id, "p");
    const m = JSON.parse(tokenRequestBody("p", true, 8, "messages"));
    assert.equal(JSON.parse(m.metadata.user_id).session_id, "p");
    const r = JSON.parse(tokenRequestBody("p", false, 8, "responses"));
    assert.equal(r.prompt_cache_key, "p");
    assert.equal(r.max_output_tokens, 8);
  });
});
