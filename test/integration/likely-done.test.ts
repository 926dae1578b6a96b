import assert from "node:assert/strict";
import { test } from "node:test";
import { FINAL_GRACE_MS } from "../../src/core/scheduler-config.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/**
 * The likely-done rule through HTTP on the manual clock: the fake backend's text answers end
 * with `finish_reason: "stop"`; with `x-fake-tool-call` they end in a tool call.
 */

const ask = async (url: string, program: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-program-id": program, ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
  });
  await res.text();
  return res.status;
};

const program = async (url: string, id: string) => {
  const res = await fetch(`${url}/programs/${id}`);
  // biome-ignore lint/suspicious/noExplicitAny: the JSON view, read field by field
  const body: any = res.status === 200 ? await res.json() : null;
  return body;
};

const TOOL_CALL = { "x-fake-tool-call": "1" };

test("a final answer marks its program likely done; it is released when the grace ends", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url });
  try {
    assert.equal(await ask(router.url, "p", TOOL_CALL), 200);
    assert.equal((await program(router.url, "p")).likely_done_since, null);
    assert.equal(await ask(router.url, "p"), 200);
    const marked = await program(router.url, "p");
    assert.equal(marked.likely_done_since, router.clock.now());
    assert.equal(marked.room_lent, true, "its room is lent at once");
    router.clock.advance(FINAL_GRACE_MS - 1);
    assert.ok(await program(router.url, "p"), "not before the grace ends");
    // The router ticks at the grace's end by itself (its deadline timer).
    router.clock.advance(1);
    await router.waitUntil(() => router.loop.scheduler.program("p") === undefined);
    assert.equal(await program(router.url, "p"), null, "released");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a likely-done program continued within the grace goes on where it was", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url });
  try {
    assert.equal(await ask(router.url, "p"), 200);
    const before = await program(router.url, "p");
    router.clock.advance(FINAL_GRACE_MS - 1);
    assert.equal(await ask(router.url, "p", TOOL_CALL), 200);
    const after = await program(router.url, "p");
    assert.equal(after.step_count, 2, "the same program, one step on");
    assert.equal(after.backend, before.backend);
    assert.equal(after.likely_done_since, null);
    assert.equal(after.room_lent, false);
    router.clock.advance(10 * FINAL_GRACE_MS);
    await router.ticker.runOnce();
    assert.ok(await program(router.url, "p"), "a program that calls tools stays");
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(metrics, /^maitred_likely_done_total\{outcome="marked"\} 1$/m);
    assert.match(metrics, /^maitred_likely_done_total\{outcome="continued"\} 1$/m);
    assert.match(metrics, /^maitred_likely_done_total\{outcome="released"\} 0$/m);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("--final-grace 0 keeps a program after its final answer", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url, "final-grace": "0" });
  try {
    assert.equal(await ask(router.url, "p"), 200);
    // Twice the default grace, well inside the time an idle program keeps its room.
    router.clock.advance(2 * FINAL_GRACE_MS);
    await router.ticker.runOnce();
    const p = await program(router.url, "p");
    assert.equal(p.likely_done_since, null);
    assert.equal(p.room_lent, false);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a request after the release is answered as a new program and counted as came back", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url });
  try {
    assert.equal(await ask(router.url, "p"), 200);
    router.clock.advance(FINAL_GRACE_MS);
    await router.waitUntil(() => router.loop.scheduler.program("p") === undefined);
    // The late request: nothing is lost, the program starts again.
    assert.equal(await ask(router.url, "p", TOOL_CALL), 200);
    const again = await program(router.url, "p");
    assert.equal(again.step_count, 1);
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(metrics, /^maitred_likely_done_total\{outcome="released"\} 1$/m);
    assert.match(metrics, /^maitred_likely_done_total\{outcome="came_back"\} 1$/m);
    // It went on after a final answer once: such answers no longer end it.
    assert.equal(await ask(router.url, "p"), 200);
    router.clock.advance(2 * FINAL_GRACE_MS);
    await router.ticker.runOnce();
    assert.ok(await program(router.url, "p"));
  } finally {
    await router.close();
    await backend.close();
  }
});
