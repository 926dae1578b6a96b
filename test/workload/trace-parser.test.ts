import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../src/errors.ts";
import { parseTrace, parseTraceLine } from "../../src/workload/trace-parser.ts";

const good = JSON.stringify({
  id: "run/task-1",
  source: "test",
  exit_status: "Submitted",
  steps: [
    { prompt_tokens: 1000, completion_tokens: 50, tool_ms: 120, llm_ms: 900 },
    { prompt_tokens: 1400, completion_tokens: 80, human_ms: 5000 },
    { prompt_tokens: 1700, completion_tokens: 30, extra_field: true },
  ],
});

function failsAt(text: string, where: string, pattern: RegExp): void {
  assert.throws(
    () => parseTrace(text, "t.jsonl"),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `want ConfigError, got ${err}`);
      assert.equal(err.field, where);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe("parseTrace", () => {
  it("a good line keeps counts and optional timings, ignoring unknown fields", () => {
    const [p] = parseTrace(`${good}\n`, "t.jsonl");
    assert.equal(p.id, "run/task-1");
    assert.equal(p.exitStatus, "Submitted");
    assert.deepEqual(p.steps, [
      { promptTokens: 1000, completionTokens: 50, toolMs: 120, llmMs: 900 },
      { promptTokens: 1400, completionTokens: 80, humanMs: 5000 },
      { promptTokens: 1700, completionTokens: 30 },
    ]);
  });

  it("blank lines are skipped and line numbers still count them", () => {
    failsAt(`${good}\n\n{"id":"x","steps":[]}\n`, "t.jsonl:3", /steps.*non-empty/);
  });

  it("invalid JSON names the file and line", () => {
    failsAt(`${good}\n{not json`, "t.jsonl:2", /not valid JSON/);
  });

  it("a missing id is rejected", () => {
    failsAt('{"steps":[{"prompt_tokens":1,"completion_tokens":1}]}', "t.jsonl:1", /`id`/);
  });

  it("a non-integer prompt_tokens names the step and the bad value", () => {
    failsAt(
      '{"id":"a","steps":[{"prompt_tokens":10,"completion_tokens":1},{"prompt_tokens":2.5,"completion_tokens":1}]}',
      "t.jsonl:1",
      /steps\[1\]\.prompt_tokens must be a positive integer, got 2\.5/,
    );
  });

  it("a negative tool_ms is rejected", () => {
    failsAt(
      '{"id":"a","steps":[{"prompt_tokens":10,"completion_tokens":1,"tool_ms":-3}]}',
      "t.jsonl:1",
      /steps\[0\]\.tool_ms must be a non-negative number/,
    );
  });

  it("a line that is an array is rejected", () => {
    failsAt("[1,2]", "t.jsonl:1", /JSON object/);
  });

  it("an empty file is an error, not an empty workload", () => {
    assert.throws(() => parseTrace("\n\n", "empty.jsonl"), /no programs/);
  });

  it("parseTraceLine reports the line it is given", () => {
    assert.throws(() => parseTraceLine("{}", "f.jsonl", 17), /f\.jsonl:17/);
  });
});
