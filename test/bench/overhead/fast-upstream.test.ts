import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type FastUpstream, startFastUpstream } from "../../../src/bench/overhead/fast-upstream.ts";

describe("the proxy benchmark's fast upstream", () => {
  let upstream: FastUpstream;
  before(async () => {
    upstream = await startFastUpstream(40);
  });
  after(() => upstream.close());

  const ask = (body: object) =>
    fetch(`${upstream.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("answers a plain request with max_tokens tokens and counts one write", async () => {
    const s0 = upstream.stats();
    const res = await ask({ model: "m", max_tokens: 3, stream: false });
    const body = (await res.json()) as {
      choices: { message: { content: string } }[];
      usage: { completion_tokens: number };
    };
    assert.equal(body.choices[0].message.content, "toktokok");
    assert.equal(body.usage.completion_tokens, 3);
    const s1 = upstream.stats();
    assert.deepEqual(
      [s1.requests - s0.requests, s1.writes - s0.writes, s1.events - s0.events],
      [1, 1, 0],
    );
  });

  it("streams a short answer whole: role, tokens, usage when asked, [DONE]", async () => {
    const s0 = upstream.stats();
    const res = await ask({
      model: "m",
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    const events = (await res.text()).split("\n\n").filter((e) => e.startsWith("data:"));
    assert.equal(events.length, 1 + 4 + 2, "role, 4 tokens, usage, [DONE]");
    assert.equal(events.at(-1), "data: [DONE]");
    assert.equal(upstream.stats().events - s0.events, 4 + 3);
  });

  it("writes the long stream in groups and counts each event", async () => {
    const s0 = upstream.stats();
    const res = await ask({ model: "m", max_tokens: 40, stream: true });
    const events = (await res.text()).split("\n\n").filter((e) => e.startsWith("data:"));
    assert.equal(events.length, 40 + 2, "40 tokens, usage, [DONE]");
    const s1 = upstream.stats();
    assert.equal(s1.events - s0.events, 40 + 2);
    assert.equal(s1.writes - s0.writes, 40 / 10 + 1, "groups of 10, then the tail");
  });
});
