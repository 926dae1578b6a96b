import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createLogger } from "../../src/util/logger.ts";
import { type FakeBackend, startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("access-log", () => {
  type Line = Record<string, unknown>;

  let backend: FakeBackend;
  before(async () => {
    backend = await startFakeBackend({ models: ["m"], tokens: 4, promptTokens: 11 });
  });
  after(async () => {
    await backend.close();
  });

  /** A router whose info lines are kept, and the access lines among them. */
  async function withRouter(
    flags: Record<string, unknown>,
    body: (r: TestRouter, access: () => Line[]) => Promise<void>,
  ) {
    const lines: Line[] = [];
    const logger = createLogger({ level: "info", write: (l) => lines.push(JSON.parse(l)) });
    const r = await startTestRouter({ backends: backend.url, ...flags }, { logger });
    try {
      await body(r, () => lines.filter((l) => l.msg === "request"));
    } finally {
      await r.close();
    }
  }

  const chat = (url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...body }),
    });

  test("a finished request leaves one access line with its id, program, backend, timing and tokens", async () => {
    await withRouter({}, async (r, access) => {
      const res = await chat(r.url, { program_id: "agent-1" }, { "x-request-id": "req-abc" });
      assert.equal(res.status, 200);
      await res.json();
      const lines = access();
      assert.equal(lines.length, 1, `want one line, got ${JSON.stringify(lines)}`);
      const l = lines[0];
      assert.equal(l.level, "info");
      assert.equal(l.requestId, res.headers.get("x-request-id"));
      assert.deepEqual(
        [l.method, l.path, l.status, l.programId, l.backend, l.error],
        ["POST", "/v1/chat/completions", 200, "agent-1", backend.url, null],
      );
      assert.equal(l.heldMs, 0, "dispatched at once");
      assert.equal(l.promptTokens, 11);
      assert.equal(l.completionTokens, 4);
      assert.equal(typeof l.durationMs, "number");
      assert.equal(typeof l.ttftMs, "number", "the answer is streamed from the backend");
    });
  });

  test("a refused request's line carries its status and error code; probes leave none", async () => {
    await withRouter({}, async (r, access) => {
      const bad = await fetch(`${r.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{not json",
      });
      assert.equal(bad.status, 400);
      const { error } = (await bad.json()) as { error: { code: string } };
      await (await fetch(`${r.url}/health`)).text();
      const lines = access();
      assert.equal(lines.length, 1, `want one line (not /health), got ${JSON.stringify(lines)}`);
      assert.deepEqual([lines[0].status, lines[0].error], [400, error.code]);
      assert.equal(lines[0].programId, null);
    });
  });

  test("--access-log off writes no line", async () => {
    await withRouter({ "access-log": "off" }, async (r, access) => {
      const res = await chat(r.url, { program_id: "agent-2" });
      await res.json();
      assert.equal(res.status, 200);
      assert.equal(access().length, 0);
    });
  });

  test("a path no route matches is logged with the 404 its client got", async () => {
    await withRouter({}, async (r, access) => {
      const res = await fetch(`${r.url}/v1/nothing-here`);
      assert.equal(res.status, 404);
      const { error } = (await res.json()) as { error: { code: string } };
      const lines = access();
      assert.equal(lines.length, 1);
      assert.deepEqual([lines[0].status, lines[0].error], [404, error.code]);
    });
  });

  test("a request that ends while held is logged with how long it was held", async () => {
    const held = await startFakeBackend({ numGpuBlocks: 0 }); // no capacity known: nothing placed
    const lines: Line[] = [];
    const logger = createLogger({ level: "info", write: (l) => lines.push(JSON.parse(l)) });
    const r = await startTestRouter(
      { backends: held.url, "scheduler-interval": "3600" },
      { logger },
    );
    try {
      const answer = chat(r.url, { program_id: "waits" }, { "x-maitred-max-wait-ms": "20000" });
      await r.waitForEvent((e) => e.kind === "request_arrived");
      r.clock.advance(20_000);
      const res = await answer;
      assert.equal(res.status, 503);
      await res.json();
      const line = lines.find((l) => l.msg === "request" && l.path === "/v1/chat/completions");
      assert.ok(line, `want the request's line, got ${JSON.stringify(lines)}`);
      assert.deepEqual(
        [line.status, line.error, line.heldMs, line.backend],
        [503, "paused_too_long", 20_000, null],
      );
    } finally {
      await r.close();
      await held.close();
    }
  });
});
