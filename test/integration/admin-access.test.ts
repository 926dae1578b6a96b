import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

const TOKEN = "s3cret-admin-token-0123";

test("with --admin-token the admin routes need it; the agent's routes, /health and /metrics do not", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url, "admin-token": TOKEN });
  try {
    for (const path of ["/programs", "/programs/p1", "/backends", "/profiles"]) {
      const res = await fetch(`${router.url}${path}`);
      assert.equal(res.status, 401, path);
      assert.equal(res.headers.get("www-authenticate"), "Bearer");
      const body = (await res.json()) as { error: { type: string; message: string } };
      assert.equal(body.error.type, "AuthenticationError");
      const wrong = await fetch(`${router.url}${path}`, {
        headers: { authorization: "Bearer not-the-token-at-all" },
      });
      assert.equal(wrong.status, 401, path);
    }
    const ok = await fetch(`${router.url}/programs`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(ok.status, 200);
    for (const path of ["/health", "/metrics", "/v1/models"])
      assert.equal((await fetch(`${router.url}${path}`)).status, 200, path);
    const release = await fetch(`${router.url}/programs/release`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ program_id: "p1" }),
    });
    assert.equal(release.status, 200, "ending a program stays the agent's own act");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a token shorter than 16 characters is refused at startup", async () => {
  await assert.rejects(
    startTestRouter({ backends: "http://127.0.0.1:9", "admin-token": "short" }),
    /admin-token.*16 characters/,
  );
});
