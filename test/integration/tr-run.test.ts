import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePrometheusText, sumOf } from "../../src/backends/prometheus-text.ts";
import type { TimerHandle } from "../../src/runtime/clock.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

/**
 * The whole loop on real sockets: simulated vLLM backends with a tiny KV cache, agents that
 * take turns, and the tr scheduler pausing and resuming them. Router, ticks and engines run on
 * one virtual clock (src/runtime/clock.ts) at the shipped settings: time jumps to the next
 * tick or engine step once the sockets have settled, never by sleeping.
 */
const PROGRAMS = 8;
const TURNS = 4;
/** Tool time between two turns of a program (virtual; the scheduler ticks every 5 s). */
const TOOL_MS = 3000;
/** Virtual time after which a run that has not ended is a hang (it takes about a minute). */
const STUCK_AFTER_MS = 3_600_000;
const SYSTEM = "You are a careful software agent working on a repository. ".repeat(6);
// 65 blocks × 16 tokens ≈ 1 k tokens of KV per backend; eight growing programs need more.
const SIM_YAML = "sim:\n  num-gpu-blocks: 65\n  block-size: 16\n  max-model-len: 1024\n";

interface AgentResult {
  turns: number;
  maxPausedMs: number;
}

async function agent(router: TestRouter, id: string): Promise<AgentResult> {
  const messages: Array<{ role: string; content: string }> = [{ role: "system", content: SYSTEM }];
  let maxPausedMs = 0;
  for (let turn = 0; turn < TURNS; turn++) {
    messages.push({
      role: "user",
      content: `Turn ${turn}: the tool printed ${"output line ".repeat(25)}`,
    });
    const last = turn === TURNS - 1;
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(last ? { "x-program-final": "true" } : {}),
      },
      body: JSON.stringify({
        model: "meta-llama/Llama-3.1-8B-Instruct",
        messages,
        max_tokens: 12,
        stream: turn % 2 === 1,
        program_id: id,
      }),
    });
    assert.equal(
      res.status,
      200,
      `${id} turn ${turn}: got ${res.status}: ${res.status === 200 ? "" : await res.text()}`,
    );
    maxPausedMs = Math.max(maxPausedMs, Number(res.headers.get("x-maitred-paused-ms")));
    const text = await res.text();
    messages.push({ role: "assistant", content: text.slice(0, 200) });
    // The tool runs between turns, as in any agent: the program holds its KV meanwhile.
    if (!last) await new Promise<void>((resolve) => router.clock.setTimeout(resolve, TOOL_MS));
  }
  return { turns: TURNS, maxPausedMs };
}

test("a tr run on a tiny KV cache pauses programs, resumes them, and every program completes", async () => {
  const router = await startTestRouter(
    { backends: "sim:2" },
    { yaml: SIM_YAML, virtualTime: true },
  );
  let stuck: TimerHandle | undefined;
  try {
    const agents = Promise.all(
      Array.from({ length: PROGRAMS }, (_, i) => agent(router, `agent-${i}`)),
    );
    // Nothing left to wait for but time: the clock runs on to this and the run fails.
    const hang = new Promise<never>((_, reject) => {
      stuck = router.clock.setTimeout(() => {
        const snap = router.loop.scheduler.snapshot();
        reject(new Error(`stuck: ${snap.queueLength} parked, ${snap.programs.length} programs`));
      }, STUCK_AFTER_MS);
    });
    const results = await Promise.race([agents, hang]);
    assert.equal(results.length, PROGRAMS);
    assert.ok(
      results.every((r) => r.turns === TURNS),
      "every program ran all its turns",
    );

    const snap = router.loop.scheduler.snapshot();
    assert.ok(
      snap.counters.pauses > 0,
      `got ${snap.counters.pauses} pauses, want some: the KV cache is too small for all`,
    );
    assert.ok(
      results.some((r) => r.maxPausedMs > 0),
      "some request was held while its program was paused, then resumed and answered",
    );
    assert.equal(snap.programs.length, 0, "final turns released every program");
    assert.equal(snap.queueLength, 0);

    const metrics = parsePrometheusText(await (await fetch(`${router.url}/metrics`)).text());
    assert.equal(sumOf(metrics, "maitred_pauses_total"), snap.counters.pauses);
    assert.equal(sumOf(metrics, "maitred_resumes_total"), snap.counters.resumes);
    assert.ok((sumOf(metrics, "maitred_request_duration_seconds_count") ?? 0) >= PROGRAMS * TURNS);
    assert.ok((sumOf(metrics, "maitred_pause_duration_seconds_count") ?? 0) > 0);
    assert.equal(sumOf(metrics, "maitred_backend_capacity_tokens"), 2 * 65 * 16);
  } finally {
    stuck?.cancel();
    await router.close();
  }
});
