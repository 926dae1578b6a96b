import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";
import { NEW_PROGRAM_START_MS } from "../../src/core/scheduler-constants.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { withHeldRouter } from "./helpers/held-router.ts";
import { openStream } from "./helpers/stream-reader.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

const TOKEN = "ui-admin-token-0123456789";

/**
 * The first SSE frame of /ui/events, then the connection is destroyed (a fetch's abort can
 * leave its connection open for seconds, and shutdown waits for it).
 */
function firstFrame(router: TestRouter, query = ""): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request(`${router.url}/ui/events${query}`, { agent: false }, (res) => {
      assert.equal(res.statusCode, 200);
      assert.match(res.headers["content-type"] ?? "", /text\/event-stream/);
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (piece: string) => {
        text += piece;
        if (!text.includes("\n\n")) return;
        res.destroy();
        resolve(JSON.parse(text.slice(text.indexOf("data: ") + 6, text.indexOf("\n\n"))));
      });
    });
    req.on("error", reject);
    req.end();
  });
}

test("/ui serves the page and its files from the package, and /ui/events streams frames of backends and programs", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url });
  try {
    const page = await fetch(`${router.url}/ui`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    const html = await page.text();
    for (const src of ["/ui/app.js", "/ui/app.css", "/ui/uplot.js", "/ui/uplot.css"]) {
      assert.ok(html.includes(src), src);
      const file = await fetch(`${router.url}${src}`);
      assert.equal(file.status, 200, src);
      assert.ok((await file.text()).length > 100, src);
    }
    assert.doesNotMatch(html, /https?:\/\//, "nothing is fetched from elsewhere");
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        program_id: "seen",
        messages: [{ role: "user", content: "x" }],
      }),
    });
    await res.text();
    const frame = (await firstFrame(router)) as {
      backends: { id: string; healthy: boolean }[];
      programs: { id: string }[];
      stepsPerMin: number;
    };
    assert.deepEqual(
      frame.backends.map((b) => [b.id, b.healthy]),
      [[backend.url, true]],
    );
    assert.deepEqual(
      frame.programs.map((p) => p.id),
      ["seen"],
    );
    assert.equal(frame.stepsPerMin, 1);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("with --admin-token the page and its stream need the token, as a bearer header or ?token=", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url, "admin-token": TOKEN });
  try {
    assert.equal((await fetch(`${router.url}/ui/app.js`)).status, 200, "files show nothing");
    for (const path of ["/ui", "/ui/events"]) {
      assert.equal((await fetch(`${router.url}${path}`)).status, 401, path);
      assert.equal(
        (await fetch(`${router.url}${path}?token=wrong-token-000000`)).status,
        401,
        path,
      );
    }
    const page = await fetch(`${router.url}/ui?token=${TOKEN}`);
    assert.equal(page.status, 200);
    await page.text();
    const frame = await firstFrame(router, `?token=${TOKEN}`);
    assert.ok(Array.isArray(frame.backends));
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a held program shows its place in the queue, its wait and its bounds on the live page", async () => {
  await withHeldRouter(async (router, backend) => {
    const s = await openStream(router, "held-here");
    router.clock.advance(15_000);
    const frame = (await firstFrame(router)) as {
      heldPrograms: number;
      programs: { id: string; hold: Record<string, number | null> | null }[];
    };
    assert.equal(frame.heldPrograms, 1);
    const { maxPauseMs } = router.config;
    assert.deepEqual(frame.programs.find((p) => p.id === "held-here")?.hold, {
      position: 1,
      waitedMs: 15_000,
      // A new program's first request: room is made at the start bound, the shortest one.
      roomInMs:
        Math.min(router.config.ageingMs || maxPauseMs, maxPauseMs, NEW_PROGRAM_START_MS) - 15_000,
      seatInMs: maxPauseMs - 15_000,
    });
    backend.setNumGpuBlocks(4096);
    await router.ticker.runOnce();
    await s.end();
  });
});
