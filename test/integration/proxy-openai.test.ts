import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { type FakeBackend, startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("proxy-openai", () => {
  let backend: FakeBackend;
  let other: FakeBackend;
  let router: TestRouter;
  let client: OpenAI;

  before(async () => {
    backend = await startFakeBackend({ models: ["m", "shared"], tokens: 4, promptTokens: 11 });
    other = await startFakeBackend({ models: ["shared", "n"] });
    router = await startTestRouter({ backends: `${backend.url},${other.url}` });
    client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "sk-test-key", maxRetries: 0 });
  });
  after(async () => {
    await router.close();
    await backend.close();
    await other.close();
  });

  const lastCompletion = (b: FakeBackend) =>
    b.received.filter((r) => r.path.startsWith("/v1/")).at(-1);

  test("a stream through the official openai client arrives whole, without the usage chunk it did not ask for", async () => {
    const stream = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hello" }],
      stream: true,
      // @ts-expect-error maitred's extension field, as ThunderAgent clients send it
      program_id: "agent-stream",
    });
    let text = "";
    let usageChunks = 0;
    for await (const chunk of stream) {
      if (chunk.usage) usageChunks++;
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    assert.equal(text, "t1t2t3t4");
    assert.equal(usageChunks, 0, "the client did not ask for usage, so it sees none");
  });

  test("the backend sees no program id, and include_usage added by maitred", async () => {
    await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      // @ts-expect-error extension fields
      program_id: "agent-strip",
      extra_body: { program_id: "agent-strip", top_k: 3 },
    });
    const seen = [backend, other]
      .map(lastCompletion)
      .find((r) => r && JSON.stringify(r.body).includes('"hi"'));
    assert.ok(seen, "a backend received the request");
    assert.equal(seen.body.program_id, undefined, `backend saw ${JSON.stringify(seen.body)}`);
    assert.deepEqual(seen.body.extra_body, { top_k: 3 });
    assert.deepEqual(seen.body.stream_options, { include_usage: true });
    assert.equal(seen.headers.authorization, "Bearer sk-test-key", "Authorization is forwarded");
  });

  test("the program's books follow the engine's usage after a streamed turn", async () => {
    const stream = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "count me" }],
      stream: true,
      stream_options: { include_usage: true },
      // @ts-expect-error extension field
      program_id: "agent-books",
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage ??= chunk.usage ?? undefined;
    assert.ok(usage, "asked for usage, so the client gets it");
    const res = await fetch(`${router.url}/programs/agent-books`);
    const view = (await res.json()) as {
      total_tokens: number;
      status: string;
      in_flight: number;
      step_count: number;
    };
    assert.equal(view.total_tokens, usage.total_tokens);
    assert.equal(view.status, "acting", "the turn ended: the program runs its tool");
    assert.equal(view.in_flight, 0);
    assert.equal(view.step_count, 1);
  });

  test("a non-streamed answer passes through with its usage and maitred's headers", async () => {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-program-id": "agent-headers" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-maitred-program"), "agent-headers");
    assert.ok([backend.url, other.url].includes(res.headers.get("x-maitred-backend") ?? ""));
    assert.equal(res.headers.get("x-maitred-paused-ms"), "0");
    assert.equal(res.headers.get("x-upstream"), "fake", "backend headers pass through");
    const body = (await res.json()) as { usage: { total_tokens: number } };
    const view = (await (await fetch(`${router.url}/programs/agent-headers`)).json()) as {
      total_tokens: number;
    };
    assert.equal(view.total_tokens, body.usage.total_tokens);
  });

  test("a backend's error status and body pass through unchanged", async () => {
    const res = await fetch(`${router.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-fake-status": "422" },
      body: JSON.stringify({ model: "m", prompt: "p" }),
    });
    assert.equal(res.status, 422);
    assert.deepEqual(await res.json(), {
      error: { message: "fake failure", type: "X", param: null, code: 422 },
    });
  });

  test("GET /v1/models is the union over healthy backends", async () => {
    const models = await client.models.list();
    assert.deepEqual(models.data.map((m) => m.id).sort(), ["m", "n", "shared"]);
  });

  test("release answers released=true for a known program, false after, and 400 without an id", async () => {
    const post = (body: string) =>
      fetch(`${router.url}/programs/release`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    const first = await post(JSON.stringify({ program_id: "agent-headers" }));
    assert.deepEqual(await first.json(), { program_id: "agent-headers", released: true });
    assert.deepEqual(await (await post(JSON.stringify({ program_id: "agent-headers" }))).json(), {
      program_id: "agent-headers",
      released: false,
    });
    const missing = await post("{}");
    assert.equal(missing.status, 400);
    assert.equal(
      ((await missing.json()) as { error: { param: string } }).error.param,
      "program_id",
    );
    assert.equal((await fetch(`${router.url}/programs/agent-headers`)).status, 404);
  });

  test("x-program-final ends the program with its last turn", async () => {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-program-final": "true" },
      body: JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "bye" }],
        program_id: "agent-final",
      }),
    });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.equal((await fetch(`${router.url}/programs/agent-final`)).status, 404);
  });

  test("admin views answer: /programs keyed by id, /health and /backends per backend", async () => {
    const programs = (await (await fetch(`${router.url}/programs`)).json()) as Record<
      string,
      { state: string }
    >;
    assert.equal(programs["agent-books"]?.state, "active");
    const health = (await (await fetch(`${router.url}/health`)).json()) as {
      status: string;
      mode: string;
      per_backend: object;
    };
    assert.equal(health.status, "ok");
    assert.equal(health.mode, "tr");
    assert.deepEqual(Object.keys(health.per_backend).sort(), [backend.url, other.url].sort());
    const backends = (await (await fetch(`${router.url}/backends`)).json()) as Record<
      string,
      { capacity_tokens: number; healthy: boolean; waiting_bounds: unknown }
    >;
    assert.equal(backends[backend.url]?.capacity_tokens, 16 * 4096);
    assert.equal(backends[backend.url]?.healthy, true);
    assert.deepEqual(
      backends[backend.url]?.waiting_bounds,
      { tail: "bounded", ageing_s: 240, max_pause_s: 300, tier_packing: "rotate", overridden: [] },
      "the default preset's bounds are the ones in force",
    );
  });

  test("GET /backends names the preset in force and the half an explicit flag overrides", async () => {
    const r = await startTestRouter({ backends: backend.url, tail: "throughput", ageing: "90" });
    try {
      const backends = (await (await fetch(`${r.url}/backends`)).json()) as Record<
        string,
        { waiting_bounds: unknown }
      >;
      assert.deepEqual(backends[backend.url]?.waiting_bounds, {
        tail: "throughput",
        ageing_s: 90,
        max_pause_s: 1800,
        tier_packing: "gpu",
        overridden: ["ageing"],
      });
    } finally {
      await r.close();
    }
  });
});
