import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

const streamBody = (programId: string) =>
  JSON.stringify({
    model: "m",
    stream: true,
    messages: [{ role: "user", content: "long" }],
    program_id: programId,
  });

test("on shutdown an in-flight stream runs to its end before close() resolves", async () => {
  const backend = await startFakeBackend({ tokens: 6, holdAfter: 3 });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: streamBody("in-flight"),
    });
    await backend.held();
    let closed = false;
    const closing = router.close().then(() => {
      closed = true;
    });
    const text = res.text();
    await router.waitForEvent((e) => e.kind === "shutdown");
    assert.equal(closed, false, "close() waits for the stream");
    backend.release();
    const body = await text;
    assert.match(body, /t6/, "the stream was delivered whole");
    assert.match(body, /\[DONE\]/);
    await closing;
    const finished = router.events.find((e) => e.kind === "request_finished");
    assert.equal(finished?.kind === "request_finished" && finished.outcome, "ok");
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});

test("a stream still running when the shutdown grace ends is cancelled with an in-band error", async () => {
  const backend = await startFakeBackend({ tokens: 6, holdAfter: 2 });
  const router = await startTestRouter({ backends: backend.url, "shutdown-grace": "10" });
  try {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: streamBody("too-slow"),
    });
    await backend.held();
    const closing = router.close();
    const text = res.text();
    await router.waitForEvent((e) => e.kind === "shutdown");
    router.clock.advance(10_000); // the grace period, on the router's clock
    const body = await text;
    assert.match(body, /"code":"shutting_down"/, "the client learns why its stream ended");
    assert.match(body, /shutting down/);
    await closing;
    const finished = router.events.find((e) => e.kind === "request_finished");
    assert.equal(finished?.kind === "request_finished" && finished.outcome, "cancelled");
  } finally {
    backend.release();
    await backend.close();
  }
});

test("--profile serves per-program timing and appends the CSV", async () => {
  const backend = await startFakeBackend({ tokens: 3 });
  const dir = mkdtempSync(join(tmpdir(), "maitred-profile-"));
  const router = await startTestRouter({
    backends: backend.url,
    profile: "true",
    "profile-dir": dir,
  });
  try {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: streamBody("profiled"),
      });
      await res.text();
      await router.waitUntil(
        () => router.events.filter((e) => e.kind === "request_finished").length === i + 1,
      );
    }
    const all = (await (await fetch(`${router.url}/profiles`)).json()) as Record<
      string,
      { step_count: number }
    >;
    assert.equal(all.profiled?.step_count, 2);
    const one = (await (await fetch(`${router.url}/profiles/profiled`)).json()) as {
      prompt_tokens: number;
    };
    assert.equal(one.prompt_tokens, 20, "two steps of 10 prompt tokens from usage");
    assert.equal((await fetch(`${router.url}/profiles/nobody`)).status, 404);
  } finally {
    await router.close();
    await backend.close();
  }
  const csv = readFileSync(join(dir, "step_profiles.csv"), "utf8").trim().split("\n");
  assert.equal(csv.length, 3, "header and two rows, flushed by close()");
  assert.match(csv[2], /^profiled,2,/);
});
