import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TIMING_PROFILES } from "../../src/engine/timing.ts";
import { ConfigError } from "../../src/errors.ts";
import { resolveSimBackendOptions } from "../../src/sim-server/options.ts";
import { runMaitred } from "../cli/run-maitred.ts";

describe("resolveSimBackendOptions", () => {
  it("fills vLLM defaults and takes model, capacity and context from the profile", () => {
    const o = resolveSimBackendOptions({ profile: "qwen3-8b-h100" });
    const p = TIMING_PROFILES["qwen3-8b-h100"];
    assert.equal(o.model, p.modelName);
    assert.equal(o.numGpuBlocks, p.numGpuBlocks);
    assert.equal(o.maxModelLen, p.maxModelLen);
    assert.equal(o.blockSize, 16);
    assert.equal(o.personality, "vllm");
    assert.equal(o.port, 8000);
    assert.deepEqual(o.failureCodes, [500]);
    assert.equal(o.streamErrorAfter, null);
    assert.equal(o.toolCallShare, 0.5);
  });

  it("shortens the default context to a small cache instead of refusing to start", () => {
    const o = resolveSimBackendOptions({ numGpuBlocks: "2048" });
    assert.equal(
      o.maxModelLen,
      2047 * 16,
      "default max-model-len should shrink to (blocks − 1) × 16",
    );
  });

  it("parses flag strings into typed values", () => {
    const o = resolveSimBackendOptions({
      port: "0",
      numGpuBlocks: "128",
      maxModelLen: "1024",
      timeScale: "2.5",
      failureRate: "0.1",
      failureCodes: "500,503",
      streamErrorAfter: "7",
      enablePromptTokensDetails: "true",
      personality: "sglang",
    });
    assert.deepEqual(
      [o.port, o.numGpuBlocks, o.maxModelLen, o.timeScale, o.failureRate, o.streamErrorAfter],
      [0, 128, 1024, 2.5, 0.1, 7],
    );
    assert.deepEqual(o.failureCodes, [500, 503]);
    assert.equal(o.enablePromptTokensDetails, true);
    assert.equal(o.personality, "sglang");
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ["a block size vLLM does not allow", { blockSize: "7" }, "block-size"],
    ["a zero time scale", { timeScale: "0" }, "time-scale"],
    ["a failure rate above 1", { failureRate: "1.5" }, "failure-rate"],
    ["a tool-call share below 0", { toolCallShare: "-0.1" }, "tool-call-share"],
    ["a tool-call share that is no number", { toolCallShare: "often" }, "tool-call-share"],
    ["a non-HTTP-error failure code", { failureCodes: "200" }, "failure-codes"],
    ["an unknown personality", { personality: "tgi" }, "personality"],
    ["an unknown profile", { profile: "gpt-9" }, "profile"],
    ["a port out of range", { port: "70000" }, "port"],
    ["a non-integer block count", { numGpuBlocks: "12.5" }, "num-gpu-blocks"],
    [
      "a context that does not fit the KV cache",
      { numGpuBlocks: "64", maxModelLen: "2048" },
      "max-model-len",
    ],
  ];
  for (const [what, raw, field] of bad) {
    it(`rejects ${what} with a ConfigError naming --${field}`, () => {
      assert.throws(
        () => resolveSimBackendOptions(raw),
        (err) => err instanceof ConfigError && err.field === field,
      );
    });
  }
});

describe("maitred sim-backend CLI", () => {
  it("exits 2 and names the flag on a bad value", async () => {
    const r = await runMaitred(["sim-backend", "--time-scale", "-1"]);
    assert.equal(r.code, 2, `stderr: ${r.stderr}`);
    assert.match(r.stderr, /time-scale/);
  });

  it("--help lists every flag with its default", async () => {
    const r = await runMaitred(["sim-backend", "--help"]);
    assert.equal(r.code, 0);
    for (const flag of [
      "--host",
      "--port",
      "--model",
      "--num-gpu-blocks",
      "--block-size",
      "--max-num-seqs",
      "--max-num-batched-tokens",
      "--max-model-len",
      "--profile",
      "--time-scale",
      "--seed",
      "--personality",
      "--enable-prompt-tokens-details",
      "--failure-rate",
      "--failure-codes",
      "--stream-error-after",
    ]) {
      assert.ok(r.stdout.includes(flag), `--help lacks ${flag}`);
    }
    assert.match(r.stdout, /\(default: 8000\)/);
  });
});
