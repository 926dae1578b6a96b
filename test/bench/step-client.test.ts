import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderProgress } from "../../src/bench/progress-bar.ts";
import { errorKind, parseCompletion } from "../../src/bench/step-client.ts";

describe("parseCompletion", () => {
  it("reads usage, cached tokens and the assistant text", () => {
    const body = {
      choices: [{ message: { role: "assistant", content: " hello" } }],
      usage: {
        prompt_tokens: 120,
        completion_tokens: 7,
        prompt_tokens_details: { cached_tokens: 96 },
      },
    };
    assert.deepEqual(parseCompletion(body), {
      prompt: 120,
      cached: 96,
      completion: 7,
      text: " hello",
    });
  });

  it("a backend without prompt_tokens_details reports cached as unknown (null)", () => {
    const parsed = parseCompletion({ usage: { prompt_tokens: 5, completion_tokens: 1 } });
    assert.equal(parsed?.cached, null);
    assert.equal(parsed?.text, undefined);
  });

  it("a body without usage is not a completion", () => {
    assert.equal(parseCompletion({ choices: [] }), null);
    assert.equal(parseCompletion("oops"), null);
    assert.equal(parseCompletion(null), null);
  });
});

describe("errorKind", () => {
  it("uses the OpenAI envelope's type when present", () => {
    const body = {
      error: { message: "m", type: "ServiceUnavailableError", param: null, code: 503 },
    };
    assert.equal(errorKind(503, body), "http_503_ServiceUnavailableError");
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
