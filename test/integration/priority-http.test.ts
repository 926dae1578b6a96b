import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

/**
 * Priority classes over real sockets: the router in front of a simulated vLLM backend (which,
 * like vLLM, answers a non-integer `priority` field with 400). Each request's class shows in
 * `x-maitred-class`; the tenant clamp can only lower it; priorities off changes nothing.
 * Router and backend run on a virtual clock: engine steps take no real time.
 */
const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const SIM = "sim:\n  num-gpu-blocks: 512\n  block-size: 16\n  max-model-len: 2048\n";
const PRIORITY = `priority:
  trust_tenant_header: true
  anonymous_max_class: interactive
  tenants:
    free: { max_class: bulk }
    app: { max_class: interactive, api_keys: [sk-app] }
    ops: { max_class: system }
`;

function chat(
  router: TestRouter,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return fetch(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: "user", content: "Say something short." }],
      max_tokens: 4,
      program_id: "agent-1",
      ...extra,
    }),
  });
}

async function classOf(res: Response): Promise<string | null> {
  assert.equal(res.status, 200, `got ${res.status}: ${res.status === 200 ? "" : await res.text()}`);
  await res.text();
  return res.headers.get("x-maitred-class");
}

describe("priorities on", () => {
  let router: TestRouter;
  before(async () => {
    router = await startTestRouter(
      { backends: "sim:1" },
      {
        yaml: SIM + PRIORITY,
        virtualTime: true,
      },
    );
  });
  after(() => router.close());

  test("a request without a class is proxied as default and says so in x-maitred-class", async () => {
    assert.equal(await classOf(await chat(router)), "default");
    const arrived = router.events.find((e) => e.kind === "request_arrived");
    assert.ok(arrived?.kind === "request_arrived");
    assert.equal(arrived.priorityClass, "default");
    assert.equal(arrived.classClamped, false);
  });

  test("x-priority sets the class, case-insensitively, and the program takes its latest request's class", async () => {
    assert.equal(
      await classOf(await chat(router, {}, { "x-priority": "Interactive" })),
      "interactive",
    );
    const view = (await (await fetch(`${router.url}/programs/agent-1`)).json()) as {
      priority_class?: string;
    };
    assert.equal(view.priority_class, "interactive");
    const health = (await (await fetch(`${router.url}/health`)).json()) as {
      priority_enabled: boolean;
      priority: {
        queue_policy: string;
        classes: Record<string, { admissions: { admitted: number } }>;
      };
    };
    assert.equal(health.priority_enabled, true);
    assert.equal(health.priority.queue_policy, "ta");
    assert.ok(health.priority.classes.interactive.admissions.admitted >= 1);
  });

  test("an unknown class is a 400 in the OpenAI envelope naming the header, never forwarded", async () => {
    const before = router.events.filter((e) => e.kind === "request_arrived").length;
    const res = await chat(router, {}, { "x-priority": "urgent" });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { type: string; param: string; message: string } };
    assert.equal(body.error.type, "BadRequestError");
    assert.equal(body.error.param, "x-priority");
    assert.match(body.error.message, /urgent.*system, interactive, default, bulk/);
    assert.equal(
      router.events.filter((e) => e.kind === "request_arrived").length,
      before,
      "the core never heard of it",
    );
  });

  test("a tenant's ceiling lowers the header's class, and x-maitred-class shows the clamped one", async () => {
    const byHeader = await chat(router, {}, { "x-priority": "interactive", "x-tenant-id": "free" });
    assert.equal(await classOf(byHeader), "bulk");
    const byKey = await chat(
      router,
      {},
      { "x-priority": "system", authorization: "Bearer sk-app", "x-tenant-id": "ops" },
    );
    assert.equal(await classOf(byKey), "interactive", "the API key's tenant wins over the header");
    const lower = await chat(router, {}, { "x-priority": "bulk", "x-tenant-id": "ops" });
    assert.equal(await classOf(lower), "bulk", "a header may lower below the ceiling");
    const ops = await chat(router, {}, { "x-priority": "system", "x-tenant-id": "ops" });
    assert.equal(await classOf(ops), "system");
    const classes = router.loop.scheduler.snapshot().priority?.classes;
    assert.equal(
      classes?.bulk.clamps,
      1,
      "each clamped request is counted under its effective class",
    );
    assert.equal(classes?.interactive.clamps, 1);
  });

  test("a string body priority is maitred's class and is stripped; an integer one is vLLM's", async () => {
    // The simulated backend, like vLLM, would answer 400 to a string `priority`.
    assert.equal(await classOf(await chat(router, { priority: "interactive" })), "interactive");
    assert.equal(await classOf(await chat(router, { priority: 0 })), "default");
  });

  test("a stream through the openai client arrives whole with its class header", async () => {
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "sk-app", maxRetries: 0 });
    // `program_id` is maitred's extension field, unknown to the client's types.
    const params = {
      model: MODEL,
      messages: [{ role: "user", content: "Stream a few words." }],
      max_tokens: 6,
      stream: true,
      program_id: "agent-stream",
    } as OpenAI.ChatCompletionCreateParamsStreaming;
    const { data: stream, response } = await client.chat.completions.create(params).withResponse();
    assert.equal(response.headers.get("x-maitred-class"), "default", "no class asked: default");
    let chunks = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      chunks++;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.ok(chunks >= 2, `got ${chunks} chunks`);
    assert.ok(finish !== null, "the stream ran to its end");
  });
});

describe("priorities off", () => {
  let router: TestRouter;
  before(async () => {
    router = await startTestRouter({ backends: "sim:1" }, { yaml: SIM, virtualTime: true });
  });
  after(() => router.close());

  test("class headers are ignored: no x-maitred-class, no 400, no class on the event", async () => {
    const res = await chat(router, {}, { "x-priority": "urgent", "x-tenant-id": "free" });
    assert.equal(res.status, 200);
    await res.text();
    assert.equal(res.headers.get("x-maitred-class"), null);
    const arrived = router.events.find((e) => e.kind === "request_arrived");
    assert.ok(arrived?.kind === "request_arrived");
    assert.equal("priorityClass" in arrived, false);
    assert.equal(router.loop.scheduler.snapshot().priority, undefined);
  });

  test("the body goes through untouched: a string priority reaches the backend, which refuses it", async () => {
    const res = await chat(router, { priority: "interactive" });
    assert.equal(res.status, 400, "as without maitred: vLLM's priority is an integer");
    const body = (await res.json()) as { error: { param: string } };
    assert.equal(body.error.param, "priority");
  });

  test("/metrics has no priority series and /health says priorities are off", async () => {
    const text = await (await fetch(`${router.url}/metrics`)).text();
    assert.doesNotMatch(text, /maitred_priority_/);
    const health = (await (await fetch(`${router.url}/health`)).json()) as Record<string, unknown>;
    assert.equal(health.priority_enabled, false);
    assert.equal("priority" in health, false);
  });
});
