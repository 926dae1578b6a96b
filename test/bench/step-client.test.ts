import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { streamsAt } from "../../src/bench/closed-loop.ts";
import { renderProgress } from "../../src/bench/progress-bar.ts";
import {
  completionFromJson,
  createSseCompletionReader,
  parseRouterNote,
} from "../../src/bench/sse-completion.ts";
import { errorKind } from "../../src/bench/step-client.ts";

/** A vLLM-shaped stream: role chunk with the first token, two deltas, usage, [DONE]. */
const STREAM = [
  'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
  'data: {"choices":[{"index":0,"delta":{"content":" hel"}}]}',
  'data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"length"}]}',
  'data: {"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":96}}}',
  "data: [DONE]",
  "",
].join("\n\n");

describe("streamed completions (sse-completion)", () => {
  it("reads usage, cached tokens and the text, and sees the first token once", () => {
    let firsts = 0;
    const r = createSseCompletionReader(() => firsts++);
    r.push(STREAM);
    assert.deepEqual(r.result(), { prompt: 120, cached: 96, completion: 2, text: " hello" });
    assert.equal(firsts, 1);
  });

  it("any split of the body, even mid-line, reads the same", () => {
    for (const size of [1, 7, 50]) {
      let firsts = 0;
      const r = createSseCompletionReader(() => firsts++);
      for (let i = 0; i < STREAM.length; i += size) r.push(STREAM.slice(i, i + size));
      assert.equal(r.result()?.text, " hello", `pieces of ${size}`);
      assert.equal(firsts, 1, `pieces of ${size}`);
    }
  });

  it("every line ending the SSE format allows reads the same, split anywhere", () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const body = STREAM.split("\n").join(eol);
      for (const size of [1, 3, body.length]) {
        const r = createSseCompletionReader(() => {});
        for (let i = 0; i < body.length; i += size) r.push(body.slice(i, i + size));
        const got = r.result();
        assert.deepEqual(
          got,
          { prompt: 120, cached: 96, completion: 2, text: " hello" },
          `${JSON.stringify(eol)}, pieces of ${size}`,
        );
      }
    }
  });

  it("bytes split inside a character decode whole", () => {
    const body = Buffer.from(STREAM.replace(" hel", " hél"));
    const at = body.indexOf(Buffer.from("é")) + 1; // between the two bytes of é
    const r = createSseCompletionReader(() => {});
    r.push(body.subarray(0, at));
    r.push(body.subarray(at));
    assert.equal(r.result()?.text, " héllo");
  });

  it("a last event without its blank line still counts", () => {
    const r = createSseCompletionReader(() => {});
    r.push(STREAM.replace(/\n+$/, "").split("\n\ndata: [DONE]")[0]);
    assert.equal(r.result()?.prompt, 120);
  });

  it("the first token is signalled when its chunk arrives, not at the end", () => {
    const seen: string[] = [];
    const r = createSseCompletionReader(() => seen.push("first"));
    r.push('data: {"choices":[],"usage":null}\n\n');
    assert.deepEqual(seen, [], "a usage-only chunk is not output");
    r.push('data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n');
    assert.deepEqual(seen, ["first"]);
  });

  it("a stream without usage is not a completion; an error event marks it failed", () => {
    const r = createSseCompletionReader(() => {});
    r.push('data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n');
    assert.equal(r.result(), null);
    const e = createSseCompletionReader(() => {});
    e.push('data: {"error":{"message":"boom","type":"InternalServerError","code":500}}\n\n');
    assert.deepEqual(e.error, {
      error: { message: "boom", type: "InternalServerError", code: 500 },
    });
    assert.equal(r.error, undefined);
  });

  it("keeps the fields of maitred's last comment on a held stream, split anywhere", () => {
    const held = [
      ": keep-alive",
      ": maitred held position=3 waited_ms=45000",
      ": maitred backend=http://gpu-1:8000/v1?a=b paused_ms=52000",
      STREAM,
    ].join("\n\n");
    for (const size of [1, 5, held.length]) {
      const r = createSseCompletionReader(() => {});
      for (let i = 0; i < held.length; i += size) r.push(held.slice(i, i + size));
      assert.deepEqual(
        r.routerNote,
        new Map([
          ["backend", "http://gpu-1:8000/v1?a=b"],
          ["paused_ms", "52000"],
        ]),
        `pieces of ${size}`,
      );
      assert.equal(r.result()?.text, " hello", "comments are no output");
    }
    const plain = createSseCompletionReader(() => {});
    plain.push(`: keep-alive\n\n:maitred-ish\n\n${STREAM}`);
    assert.equal(plain.routerNote, null, "only maitred's comments are notes");
  });

  it("reads a comment's key=value fields, skipping bare words", () => {
    assert.deepEqual(
      parseRouterNote("maitred held position=3 waited_ms=45000"),
      new Map([
        ["position", "3"],
        ["waited_ms", "45000"],
      ]),
    );
    assert.deepEqual(
      parseRouterNote("maitred status=503 retry_after=1"),
      new Map([
        ["status", "503"],
        ["retry_after", "1"],
      ]),
    );
    assert.equal(parseRouterNote("keep-alive"), null);
  });
});

describe("plain completions and the stream share", () => {
  it("a JSON completion gives the same figures as its stream", () => {
    const body = {
      choices: [{ index: 0, message: { role: "assistant", content: " hello" } }],
      usage: {
        prompt_tokens: 120,
        completion_tokens: 2,
        prompt_tokens_details: { cached_tokens: 96 },
      },
    };
    assert.deepEqual(completionFromJson(body), {
      prompt: 120,
      cached: 96,
      completion: 2,
      text: " hello",
    });
    assert.equal(completionFromJson({ choices: [] }), null, "no usage: not a completion");
  });

  it("about the share of programs stream, in any prefix of the launch order", () => {
    for (const share of [0, 0.25, 0.5, 1]) {
      for (const n of [20, 100]) {
        let streaming = 0;
        for (let i = 0; i < n; i++) if (streamsAt(i, share)) streaming++;
        assert.ok(Math.abs(streaming - share * n) <= 3, `${streaming} of ${n} at ${share}`);
      }
    }
  });
});

describe("errorKind", () => {
  it("uses the OpenAI envelope's type when present", () => {
    const body = {
      error: { message: "m", type: "ServiceUnavailableError", param: null, code: 503 },
    };
    assert.equal(errorKind(503, body), "http_503_ServiceUnavailableError");
  });

  it("a preemption (x-maitred-preempted: true) has its own kind", () => {
    const body = { error: { message: "m", type: "ServiceUnavailableError", code: 503 } };
    const headers: Record<string, string> = { "x-maitred-preempted": "true" };
    assert.equal(
      errorKind(503, body, (n) => headers[n]),
      "http_503_preempted",
    );
    assert.equal(
      errorKind(503, body, () => undefined),
      "http_503_ServiceUnavailableError",
    );
  });

  it("a preemption on a held stream, its head long gone, is told by the envelope's code", () => {
    const body = { error: { message: "m", type: "ServiceUnavailableError", code: "preempted" } };
    assert.equal(
      errorKind(503, body, () => undefined),
      "http_503_preempted",
    );
  });

  it("falls back to the status for other bodies and odd types", () => {
    assert.equal(errorKind(502, undefined), "http_502");
    assert.equal(errorKind(500, { error: { type: "has spaces" } }), "http_500");
  });
});

describe("renderProgress", () => {
  const p = {
    elapsedMs: 45_000,
    stepsCompleted: 1234,
    programsStarted: 40,
    programsCompleted: 8,
    programsRunning: 32,
    errors: 2,
  };

  it("shows elapsed over total, the phase and the counters", () => {
    const line = renderProgress(p, { label: "tr", warmupMs: 30_000, totalMs: 90_000 });
    assert.match(line, /^tr \[#{12}\.{12}\] 45s\/90s steady/);
    assert.match(line, /steps 1234 {2}programs 8 done, 32 running {2}errors 2$/);
  });

  it("is in warm-up before the window and fills by programs when count-bounded", () => {
    const line = renderProgress(p, { label: "x", warmupMs: 60_000, totalPrograms: 16 });
    assert.match(line, /warm-up/);
    assert.match(line, /\[#{12}\.{12}\]/, "8 of 16 programs ended = half");
  });
});
