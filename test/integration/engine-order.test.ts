import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type FakeBackend, startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

/**
 * The engine order over real sockets: a backend declared with `--engine-priority` gets each
 * request's place in the order as its `priority` field (the client's own replaced), on every
 * route whose engines read one (the routes' own rules: test/proxy/prepare-request.test.ts); a
 * backend not declared gets the body as the client sent it. Each backend serves its own model,
 * so where a request goes is known.
 */
describe("engine order", () => {
  let declared: FakeBackend;
  let plain: FakeBackend;
  let router: TestRouter;
  let fcfs: TestRouter;

  before(async () => {
    declared = await startFakeBackend({ models: ["ordered"] });
    plain = await startFakeBackend({ models: ["fcfs"] });
    router = await startTestRouter({
      backends: declared.url,
      "engine-priority": `${declared.url}=higher-first`,
    });
    fcfs = await startTestRouter({ backends: plain.url });
  });
  after(async () => {
    await router.close();
    await fcfs.close();
    await declared.close();
    await plain.close();
  });

  const post = async (path: string, body: Record<string, unknown>) => {
    const to = body.model === "fcfs" ? fcfs : router;
    const res = await fetch(`${to.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.text();
  };
  const last = (b: FakeBackend, path: string) => {
    const got = b.received.filter((r) => r.path === path).at(-1);
    assert.ok(got !== undefined, `nothing reached ${path}: ${b.received.map((r) => r.path)}`);
    return got.body;
  };
  const chat = (model: string, extra: Record<string, unknown> = {}) =>
    post("/v1/chat/completions", {
      model,
      messages: [{ role: "user", content: "hi" }],
      program_id: `p-${model}`,
      ...extra,
    });

  test("GET /backends says which backends schedule by priority", async () => {
    type Backends = Record<string, { priority_scheduling: string | null }>;
    const ordered = (await (await fetch(`${router.url}/backends`)).json()) as Backends;
    assert.equal(ordered[declared.url].priority_scheduling, "higher-first");
    const first = (await (await fetch(`${fcfs.url}/backends`)).json()) as Backends;
    assert.equal(first[plain.url].priority_scheduling, null);
  });

  test("a simulated backend started scheduling by priority declares itself", async () => {
    const sims = await startTestRouter(
      { backends: "sim:2", "backend-type": "sglang" },
      {
        yaml: "sim:\n  num-gpu-blocks: 512\n  max-model-len: 2048\n  scheduling-policy: priority\n",
      },
    );
    try {
      type Backends = Record<string, { priority_scheduling: string | null }>;
      const view = (await (await fetch(`${sims.url}/backends`)).json()) as Backends;
      const all = Object.values(view).map((b) => b.priority_scheduling);
      assert.deepEqual(all, ["higher-first", "higher-first"]);
    } finally {
      await sims.close();
    }
  });

  test("a declared backend gets a whole-number priority, in place of the client's own", async () => {
    await chat("ordered");
    const first = last(declared, "/v1/chat/completions").priority;
    assert.ok(Number.isInteger(first), `priority ${first}`);
    await chat("ordered", { priority: -1_000_000 });
    const second = last(declared, "/v1/chat/completions").priority;
    assert.ok(Number.isInteger(second) && second !== -1_000_000, `priority ${second}`);
  });

  test("completions carry it too", async () => {
    await post("/v1/completions", { model: "ordered", prompt: "hi", max_tokens: 2 });
    assert.ok(Number.isInteger(last(declared, "/v1/completions").priority));
  });

  test("a backend not declared gets the body as the client sent it", async () => {
    await chat("fcfs");
    assert.equal("priority" in last(plain, "/v1/chat/completions"), false);
    await chat("fcfs", { priority: 7 });
    assert.equal(last(plain, "/v1/chat/completions").priority, 7);
  });
});
