import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

const body = (chars: number) =>
  JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(chars) }] });

test("request bytes held across requests are capped: past the cap a new body gets 503 before it is read", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url, "max-buffered-bytes": "1000" });
  try {
    // A slow upload declares 800 bytes and sends a few: its 800 are held.
    const slow = body(800 - body(0).length);
    assert.equal(slow.length, 800);
    const url = new URL(`${router.url}/v1/chat/completions`);
    const upload = request(url, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(slow.length) },
    });
    const answered = new Promise<number>((resolve, reject) => {
      upload.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      upload.on("error", reject);
    });
    upload.write(slow.slice(0, 10));
    // The upload's bytes are reserved once the router has read its head; a request sent
    // before that still fits, so ask until one is refused.
    let refused: Response | null = null;
    for (let i = 0; i < 50 && refused === null; i++) {
      const res = await fetch(url, { method: "POST", body: body(300) });
      if (res.status === 503) refused = res;
      else await res.text();
    }
    assert.ok(refused, "a body that does not fit beside the held one is refused");
    assert.equal(refused.headers.get("retry-after"), "1");
    const envelope = (await refused.json()) as { error: { code: string } };
    assert.equal(envelope.error.code, "body_budget_full");
    upload.end(slow.slice(10));
    assert.equal(await answered, 200, "the slow upload itself is served");
    const after = await fetch(url, { method: "POST", body: body(300) });
    assert.equal(after.status, 200, "its bytes were given back");
  } finally {
    await router.close();
    await backend.close();
  }
});
