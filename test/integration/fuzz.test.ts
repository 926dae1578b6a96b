/**
 * Random requests against the router in front of a backend that never errs: random methods,
 * paths, headers and bodies (JSON of any shape, broken JSON, raw bytes). Whatever comes in,
 * the router makes no 5xx of its own (a 503 for a client's own tiny max wait aside), every
 * error it answers is the OpenAI envelope with a string code, and its books recount clean
 * afterwards. Seeded: FC_SEED replays a failure, FC_RUNS runs longer.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { type FakeBackend, startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("fuzz", () => {
  const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
  const RUNS = Number(process.env.FC_RUNS ?? 150);

  let backend: FakeBackend;
  let router: TestRouter;
  before(async () => {
    backend = await startFakeBackend({ tokens: 3 });
    router = await startTestRouter({ backends: backend.url });
  });
  after(async () => {
    await router.close();
    await backend.close();
  });

  const PATHS = [
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/models",
    "/programs",
    "/programs/p1",
    "/programs/release",
    "/health",
    "/metrics",
    "/backends",
    "/profiles",
  ];

  /** Printable header values (fetch refuses anything else before it reaches the router). */
  const headerValue = fc.string({
    unit: fc.constantFrom(..."ab-_ 0123456789.:/\t"),
    maxLength: 20,
  });

  const chatLike = fc.record(
    {
      model: fc.oneof(fc.constant("m"), fc.string()),
      messages: fc.oneof(
        fc.array(
          fc.record({
            role: fc.constantFrom("user", "system", "assistant"),
            content: fc.jsonValue(),
          }),
          { maxLength: 3 },
        ),
        fc.jsonValue(),
      ),
      prompt: fc.jsonValue(),
      stream: fc.oneof(fc.boolean(), fc.jsonValue()),
      stream_options: fc.jsonValue(),
      program_id: fc.oneof(fc.string(), fc.integer(), fc.jsonValue()),
      extra_body: fc.jsonValue(),
      priority: fc.oneof(fc.constantFrom("bulk", "system", "nope"), fc.integer()),
      n: fc.jsonValue(),
      max_tokens: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );

  /**
   * Paths of any shape: segments of letters, digits, marks, escapes good and bad, dot segments
   * and non-ASCII. fast-check's own webPath maps every code point before its first draw, a
   * second of the test process's time.
   */
  const anyPath = fc
    .array(
      fc.string({
        unit: fc.constantFrom(..."az09-._~!$&'()*+,;=:@?#é✓", "%2F", "%00", "%ZZ", "..", "//"),
        maxLength: 8,
      }),
      { maxLength: 4 },
    )
    .map((segments) => `/${segments.join("/")}`);

  const body = fc.oneof(
    chatLike.map((o) => JSON.stringify(o)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string(),
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString("latin1")),
  );

  const request = fc.record({
    method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"),
    path: fc.oneof(fc.constantFrom(...PATHS), anyPath),
    body,
    headers: fc.dictionary(
      fc.constantFrom(
        "x-program-id",
        "x-priority",
        "x-maitred-max-wait-ms",
        "x-program-final",
        "x-parent-program-id",
        "content-type",
        "authorization",
      ),
      headerValue,
      { maxKeys: 4 },
    ),
  });

  test("random requests: no 5xx made by the router, every error an envelope, the books clean", async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await fetch(`${router.url}${r.path.startsWith("/") ? r.path : `/${r.path}`}`, {
          method: r.method,
          headers: r.headers,
          body: r.method === "GET" ? undefined : r.body,
        });
        const text = await res.text();
        if (res.status < 400) return;
        let doc: { error?: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } };
        try {
          doc = JSON.parse(text);
        } catch {
          assert.fail(`${res.status} without a JSON body: ${text.slice(0, 80)}`);
        }
        const e = doc.error;
        assert.ok(e && typeof e.message === "string" && typeof e.type === "string", text);
        assert.equal(typeof e.code, "string", `code of ${text}`);
        assert.ok("param" in e, text);
        if (res.status >= 500) {
          // The only 5xx a healthy backend leaves room for: the client's own max wait ran out.
          assert.equal(e.code, "paused_too_long", `router-made ${res.status}: ${text}`);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Nothing is left in flight, and the books recount to what the core believes.
    await router.waitUntil(() => router.loop.requests.size === 0);
    assert.deepEqual(router.loop.scheduler.audit?.() ?? [], []);
  });
});
