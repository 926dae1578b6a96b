import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../src/errors.ts";
import { loadWorkload, parseWorkloadArg } from "../../src/workload/load-workload.ts";
import { parseTrace } from "../../src/workload/trace-parser.ts";
import { createWorkload, truncateToContext } from "../../src/workload/workload.ts";

const TRACE = [
  '{"id":"a","steps":[{"prompt_tokens":1000,"completion_tokens":50,"tool_ms":100},{"prompt_tokens":1300,"completion_tokens":0}]}',
  '{"id":"b","steps":[{"prompt_tokens":2000,"completion_tokens":40},{"prompt_tokens":2300,"completion_tokens":60,"human_ms":9000},{"prompt_tokens":2600,"completion_tokens":10}]}',
].join("\n");

describe("trace workloads", () => {
  const programs = parseTrace(TRACE, "mini.jsonl");

  it("programs keep their trace steps, get ids p<i> and staggered start offsets", () => {
    const w = createWorkload(
      { kind: "trace", file: "mini.jsonl", seed: 3, staggerMs: 250 },
      programs,
    );
    assert.equal(w.size, 2);
    const p0 = w.programAt(0);
    const p1 = w.programAt(1);
    assert.equal(p0.programId, "p0");
    assert.equal(p1.startOffsetMs, 250);
    assert.deepEqual([p0.source, p1.source].sort(), ["a", "b"]);
  });

  it("after the last trace program the sequence replays them under new ids and sources", () => {
    const w = createWorkload({ kind: "trace", file: "mini.jsonl", seed: 3 }, programs);
    const again = w.programAt(2);
    assert.equal(again.programId, "p2");
    assert.equal(again.source, `${w.programAt(0).source}~1`);
    assert.deepEqual(again.steps, w.programAt(0).steps);
  });

  it("tool time comes from the trace, a human gap is flagged, a missing one is sampled", () => {
    const w = createWorkload({ kind: "trace", file: "mini.jsonl", seed: 3 }, programs);
    const byId = Object.fromEntries([0, 1].map((i) => [w.programAt(i).source, w.programAt(i)]));
    assert.equal(byId.a.steps[0].toolMs, 100);
    assert.equal(byId.a.steps[1].toolMs, 0, "the last step has no tool time");
    assert.equal(byId.a.steps[1].completionTokens, 1, "0-token outputs replay as 1 token");
    assert.equal(byId.b.steps[1].toolMs, 9000);
    assert.equal(byId.b.steps[1].human, true);
    assert.ok(byId.b.steps[0].toolMs > 0, "missing tool_ms is sampled from the swe-bash model");
  });

  it("the seed decides the program order deterministically", () => {
    const order = (seed: number) =>
      createWorkload({ kind: "trace", file: "m", seed }, programs).programAt(0).source;
    assert.equal(order(11), order(11));
    const seen = new Set(Array.from({ length: 20 }, (_, s) => order(s)));
    assert.equal(seen.size, 2, "different seeds should reach both orders");
  });

  it("limit caps the distinct programs", () => {
    const w = createWorkload({ kind: "trace", file: "m", limit: 1 }, programs);
    assert.equal(w.size, 1);
    assert.equal(w.programAt(1).source.endsWith("~1"), true);
  });
});

describe("truncateToContext", () => {
  const steps = [
    { promptTokens: 100, completionTokens: 10, toolMs: 5 },
    { promptTokens: 200, completionTokens: 10, toolMs: 5 },
    { promptTokens: 300, completionTokens: 10, toolMs: 0 },
  ];

  it("ends a program before the first call that would overflow, with no tool after it", () => {
    const cut = truncateToContext(steps, 250);
    assert.equal(cut.length, 2);
    assert.equal(cut[1].toolMs, 0);
  });

  it("shrinks an oversized first call so the program keeps one step", () => {
    const cut = truncateToContext(steps, 60);
    assert.equal(cut.length, 1);
    assert.ok(cut[0].promptTokens + cut[0].completionTokens <= 60);
  });

  it("presets honour maxContextTokens", () => {
    const w = createWorkload({ kind: "preset", name: "claude-code", maxContextTokens: 32_768 });
    for (let i = 0; i < 50; i++) {
      for (const s of w.programAt(i).steps)
        assert.ok(s.promptTokens + s.completionTokens <= 32_768);
    }
  });
});

describe("parseWorkloadArg and loadWorkload", () => {
  it("tells presets, shipped traces and paths apart", () => {
    assert.deepEqual(parseWorkloadArg("swe-bash", { seed: 4 }), {
      kind: "preset",
      name: "swe-bash",
      seed: 4,
    });
    assert.equal(parseWorkloadArg("deepseek").kind, "trace");
    assert.equal(parseWorkloadArg("./x.jsonl").kind, "trace");
  });

  it("an unknown name is a ConfigError naming the flag and the choices", () => {
    assert.throws(
      () => parseWorkloadArg("nonsense"),
      (e: unknown) =>
        e instanceof ConfigError && e.field === "workload" && /swe-bash/.test(e.message),
    );
  });

  it("the shipped DeepSeek trace loads from inside the project with all 201 programs", async () => {
    const w = await loadWorkload({ kind: "trace", file: "deepseek" });
    assert.equal(w.size, 201);
    assert.equal(w.name, "deepseek");
    assert.ok(w.programAt(0).steps.every((s) => s.promptTokens > 0));
  });

  it("the shipped Gemini trace loads and gets sampled tool times", async () => {
    const w = await loadWorkload({ kind: "trace", file: "gemini" });
    assert.equal(w.size, 500);
    const p = w.programAt(0);
    assert.ok(p.steps.slice(0, -1).every((s) => s.toolMs > 0));
  });

  it("a missing file is a ConfigError, not a crash", async () => {
    await assert.rejects(
      loadWorkload({ kind: "trace", file: "/nonexistent/x.jsonl" }),
      ConfigError,
    );
  });
});
