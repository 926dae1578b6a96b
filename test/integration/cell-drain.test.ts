import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

interface Health {
  status: string;
  cell: string;
  takes_new_programs: boolean;
}

async function complete(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...body }),
  });
  return { res, text: await res.text() };
}

const health = async (url: string) => {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: (await res.json()) as Health };
};

const metric = async (url: string, name: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[0] ?? null;
};

/** Requests that the fake backend answers at once, whatever its hold setting. */
const NO_HOLD = { "x-fake-no-hold": "1" };

test("a cell names itself in /health, /metrics and its request ids, and says it takes new programs", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url, cell: "cell-7" });
  try {
    const h = await health(router.url);
    assert.equal(h.status, 200);
    assert.equal(h.body.cell, "cell-7");
    assert.equal(h.body.takes_new_programs, true);
    assert.equal(h.body.status, "ok");
    assert.equal(
      await metric(router.url, "maitred_cell_info"),
      'maitred_cell_info{cell="cell-7"} 1',
    );
    assert.equal(
      await metric(router.url, "maitred_cell_takes_new_programs"),
      "maitred_cell_takes_new_programs 1",
    );
    const { res } = await complete(router.url, { program_id: "p1" });
    assert.equal(res.status, 200);
    const arrived = await router.waitForEvent((e) => e.kind === "request_arrived");
    assert.ok(
      arrived.kind === "request_arrived" && arrived.requestId.startsWith("cell-7-req-"),
      JSON.stringify(arrived),
    );
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a bad --cell name is refused before anything starts", async () => {
  await assert.rejects(startTestRouter({ backends: "http://127.0.0.1:9", cell: "a b" }), /cell/);
});

test("draining: /health is 503, a new program or an anonymous request gets 503 cell_draining with Retry-After, the cell's own programs are served, and the drain ends when nothing is in flight", async () => {
  const backend = await startFakeBackend({ holdAfter: 1 });
  const router = await startTestRouter({ backends: backend.url, cell: "east" });
  try {
    // One program known and between steps, one with a stream in flight.
    assert.equal((await complete(router.url, { program_id: "known" }, NO_HOLD)).res.status, 200);
    const busy = complete(router.url, { program_id: "busy", stream: true });
    await backend.held();

    let drained = false;
    const draining = router.drain().then(() => {
      drained = true;
    });
    const h = await health(router.url);
    assert.equal(h.status, 503);
    assert.deepEqual([h.body.status, h.body.takes_new_programs], ["draining", false]);
    assert.equal(
      await metric(router.url, "maitred_cell_takes_new_programs"),
      "maitred_cell_takes_new_programs 0",
    );

    for (const body of [{ program_id: "fresh" }, {}]) {
      const { res, text } = await complete(router.url, body, NO_HOLD);
      assert.equal(res.status, 503, text);
      assert.equal(res.headers.get("retry-after"), "1");
      const err = JSON.parse(text) as { error: { code: string; message: string } };
      assert.equal(err.error.code, "cell_draining");
      assert.match(err.error.message, /east is draining/);
    }
    // The cell's own program takes its next step here, where its KV is.
    const next = await complete(router.url, { program_id: "known" }, NO_HOLD);
    assert.equal(next.res.status, 200, next.text);
    assert.equal(router.events.filter((e) => e.kind === "shutdown").length, 0);
    assert.equal(drained, false, "the drain waits for the stream in flight");

    backend.release();
    const stream = await busy;
    assert.match(stream.text, /\[DONE\]/, "the stream in flight ran to its end");
    await draining;
    assert.equal(drained, true);
    assert.equal(router.events.filter((e) => e.kind === "shutdown").length, 1);
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});

test("--drain bounds the drain: a stream still running when it ends meets the shutdown as before", async () => {
  const backend = await startFakeBackend({ holdAfter: 1 });
  const router = await startTestRouter({
    backends: backend.url,
    drain: "5",
    "shutdown-grace": "10",
  });
  try {
    const busy = complete(router.url, { program_id: "slow", stream: true });
    await backend.held();
    const draining = router.drain();
    router.clock.advance(4_999);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(router.events.filter((e) => e.kind === "shutdown").length, 0);
    router.clock.advance(1);
    await router.waitForEvent((e) => e.kind === "shutdown");
    backend.release();
    assert.match((await busy).text, /\[DONE\]/);
    await draining;
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});

test("a cell whose every backend is unhealthy answers /health 503: a balancer sends new programs elsewhere", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url, "unhealthy-after-failures": "1" });
  try {
    assert.equal((await health(router.url)).status, 200);
    await backend.close();
    await router.ticker.runOnce();
    const h = await health(router.url);
    assert.equal(h.status, 503);
    assert.deepEqual([h.body.status, h.body.takes_new_programs], ["no_healthy_backend", false]);
  } finally {
    await router.close();
  }
});
