import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

const TOKEN = "ui-admin-token-0123456789";

/** The first SSE frame of /ui/events, then the stream is closed. */
async function firstFrame(router: TestRouter, query = ""): Promise<Record<string, unknown>> {
  const abort = new AbortController();
  const res = await fetch(`${router.url}/ui/events${query}`, { signal: abort.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("\n\n")) {
    const { value } = await reader.read();
    text += new TextDecoder().decode(value);
  }
  abort.abort();
  return JSON.parse(text.slice(text.indexOf("data: ") + 6, text.indexOf("\n\n")));
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
