import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BENCH_PROXY_SPEC,
  proxyBenchPlan,
  tokenCaseName,
} from "../../../src/bench/overhead/proxy-bench-plan.ts";
import { parseScriptArgs, ScriptArgsError } from "../../../src/bench/script-args.ts";

function plan(argv: string[]) {
  const r = parseScriptArgs(BENCH_PROXY_SPEC, argv);
  if (r.help) throw new Error("asked for help");
  return proxyBenchPlan(r, { argv, date: "2026-01-02" });
}

describe("bench:proxy's plan", () => {
  it("by default: every phase, every case, the router's flags from the table", () => {
    const p = plan([]);
    assert.deepEqual(p.phases, ["tokens", "latency", "throughput", "sse", "body"]);
    assert.deepEqual(p.routerPhases, ["latency", "throughput", "sse", "body"]);
    assert.deepEqual([p.seconds, p.requests, p.connections], [5, 5000, 64]);
    assert.equal(p.tokens?.cases.length, 7);
    assert.deepEqual(p.tokens?.upstreams, ["vllm", "vllm-one-write", "fast"]);
    assert.deepEqual(p.tokens?.routerArgs, ["--router", "tr", "--upstream-stream", "always"]);
    assert.equal(p.tokens?.seconds, 4);
    assert.equal(p.tokens?.commandLine, "node scripts/bench-proxy.ts");
    assert.equal(p.cpuProfile, undefined);
  });

  it("--token-cases keeps the cases it names, in the run's order", () => {
    const p = plan(["--token-connections", "2", "--token-cases", "streamed:4:2,plain:4:64"]);
    assert.deepEqual(p.tokens?.cases.map(tokenCaseName), ["plain:4:64", "streamed:4:2"]);
    assert.equal(
      p.tokens?.commandLine,
      "node scripts/bench-proxy.ts --token-connections 2 --token-cases streamed:4:2,plain:4:64",
    );
  });

  it("a case that this run has not is a mistake that lists the cases it has", () => {
    assert.throws(
      () => plan(["--token-connections", "2", "--token-cases", "plain:4:16"]),
      (err: Error) =>
        err instanceof ScriptArgsError &&
        err.message.startsWith("--token-cases: no such case plain:4:16 (cases: plain:4:2, "),
    );
  });

  it("without the tokens phase, no tokens plan and no case to check", () => {
    const p = plan(["--phases", "sse,latency", "--token-cases", "bogus"]);
    assert.equal(p.tokens, null);
    assert.deepEqual(p.routerPhases, ["sse", "latency"]);
  });

  it("--router-args add to the router's flags, word by word", () => {
    const p = plan(["--router", "default", "--router-args=--max-body-size 1mb  --x"]);
    assert.deepEqual(p.tokens?.routerArgs, [
      "--router",
      "default",
      "--upstream-stream",
      "always",
      "--max-body-size",
      "1mb",
      "--x",
    ]);
  });

  it("--cpu-profile covers the phase --cpu-profile-phase names", () => {
    assert.deepEqual(
      plan(["--cpu-profile", "p.cpuprofile", "--cpu-profile-phase", "sse"]).cpuProfile,
      {
        file: "p.cpuprofile",
        phase: "sse",
      },
    );
  });
});
