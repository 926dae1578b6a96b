import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import type { SchedulerEvent } from "../../src/core/events.ts";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { startTestBackend, TEST_MODEL } from "../sim-server/helpers.ts";
import { type RecordingProxy, startRecordingProxy } from "./helpers/recording-proxy.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("stored-response-owner", () => {
  /**
   * A stored Responses response belongs to the tenant whose key made it, as the OpenAI API scopes
   * one to its project: another tenant's key (or no key) reading, continuing, cancelling or
   * deleting it gets the 404 of an id that was never made, and the backend that stores it is
   * never asked. Through the official `openai` SDK, in front of a simulated vLLM behind a proxy
   * that records what reaches it.
   */
  const TENANTS = `
priority:
  enabled: false
  tenants:
    alpha: { max_class: default, api_keys: [sk-alpha, sk-alpha-2] }
    beta: { max_class: default, api_keys: [sk-beta] }
`;

  let sim: SimBackend;
  let proxy: RecordingProxy;
  let router: TestRouter;

  before(async () => {
    sim = await startTestBackend();
    proxy = await startRecordingProxy(sim.url);
    router = await startTestRouter({ backends: proxy.url }, { yaml: TENANTS });
  });
  after(async () => {
    await router?.close();
    await proxy?.close();
    await sim?.close();
  });

  const client = (url: string, apiKey: string) =>
    new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });

  /** The stored-response requests that reached the backend (its /metrics polls aside). */
  const reached = (p: RecordingProxy) =>
    p.passed.filter((r) => r.path.startsWith("/v1/responses")).map((r) => `${r.method} ${r.path}`);

  async function notFound(call: Promise<unknown>, why: string): Promise<void> {
    await assert.rejects(call, (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError, `${why}: got ${String(err)}, want a 404`);
      assert.match(err.message, /Response with id '[^']+' not found\./, why);
      return true;
    });
  }

  const neverMade = () => `resp_${randomBytes(16).toString("hex")}`;

  const arrivals = () =>
    router.events.filter(
      (e): e is Extract<SchedulerEvent, { kind: "request_arrived" }> =>
        e.kind === "request_arrived",
    );

  describe("with two tenants' API keys", () => {
    test("another tenant's key and no key get 404 on read, continue, cancel and delete of a tenant's response, nothing reaches the backend, and the tenant still reads, continues and deletes it", async () => {
      const alpha = client(router.url, "sk-alpha");
      const beta = client(router.url, "sk-beta");
      const anonymous = client(router.url, "sk-not-mapped");
      const made = await alpha.responses.create({
        model: TEST_MODEL,
        input: "a secret plan",
        max_output_tokens: 4,
      });
      const seen = reached(proxy).length;
      const arrived = arrivals().length;
      for (const [who, c] of [
        ["beta", beta],
        ["anonymous", anonymous],
      ] as const) {
        await notFound(c.responses.retrieve(made.id), `${who} retrieve`);
        const next = { model: TEST_MODEL, input: "what was it?", max_output_tokens: 4 };
        await notFound(
          c.responses.create({ ...next, previous_response_id: made.id }),
          `${who} continue`,
        );
        await notFound(
          c.responses.create({ ...next, previous_response_id: made.id, stream: true }),
          `${who} continue streamed`,
        );
        await notFound(c.responses.cancel(made.id), `${who} cancel`);
        await notFound(c.responses.delete(made.id), `${who} delete`);
      }
      assert.deepEqual(reached(proxy).slice(seen), [], "the backend was asked nothing");
      const refused = arrivals().slice(arrived);
      assert.equal(refused.length, 4, "each continuation went through the core as any request");
      assert.deepEqual(
        refused.map((e) => e.pinnedBackend),
        [undefined, undefined, undefined, undefined],
        "pinned nowhere: a pin would say where the response is stored",
      );

      // Its tenant, with either of its keys, still has it all.
      const alpha2 = client(router.url, "sk-alpha-2");
      assert.equal((await alpha2.responses.retrieve(made.id)).id, made.id);
      const next = await alpha.responses.create({
        model: TEST_MODEL,
        input: "go on",
        max_output_tokens: 4,
        previous_response_id: made.id,
      });
      assert.equal(next.previous_response_id, made.id);
      await assert.rejects(alpha.responses.cancel(made.id), OpenAI.BadRequestError);
      await alpha.responses.delete(made.id);
      await notFound(alpha.responses.retrieve(made.id), "alpha after its delete");
      assert.deepEqual(reached(proxy).slice(seen), [
        `GET /v1/responses/${made.id}`,
        "POST /v1/responses",
        `POST /v1/responses/${made.id}/cancel`,
        `DELETE /v1/responses/${made.id}`,
        `GET /v1/responses/${made.id}`,
      ]);
    });

    test("another tenant's answer for a tenant's response is the answer for an id never made: status, body and headers", async () => {
      const made = await client(router.url, "sk-alpha").responses.create({
        model: TEST_MODEL,
        input: "start",
        max_output_tokens: 4,
      });
      const unknown = neverMade();
      const ask = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${router.url}${path}`, {
          method,
          headers: { authorization: "Bearer sk-beta", "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return {
          status: res.status,
          body: text,
          headers: [...res.headers.keys()].sort(),
          contentType: res.headers.get("content-type"),
          backend: res.headers.get("x-maitred-backend"),
        };
      };
      const routes: [string, (id: string) => string, (id: string) => unknown][] = [
        ["GET", (id) => `/v1/responses/${id}`, () => undefined],
        ["DELETE", (id) => `/v1/responses/${id}`, () => undefined],
        ["POST", (id) => `/v1/responses/${id}/cancel`, () => ({})],
        [
          "POST",
          () => "/v1/responses",
          (id) => ({
            model: TEST_MODEL,
            input: "x",
            max_output_tokens: 2,
            previous_response_id: id,
          }),
        ],
      ];
      for (const [method, path, body] of routes) {
        const theirs = await ask(method, path(made.id), body(made.id));
        const never = await ask(method, path(unknown), body(unknown));
        const route = `${method} ${path("{id}")}`;
        assert.equal(theirs.status, 404, `${route}: got ${theirs.status}, want 404`);
        assert.deepEqual(
          { ...theirs, body: theirs.body.replaceAll(made.id, "{id}") },
          { ...never, body: never.body.replaceAll(unknown, "{id}") },
          `${route}: another tenant's response must answer as an id never made`,
        );
      }
    });

    test("a response made without a key stays reachable by every caller, tenants included, as before", async () => {
      const made = await client(router.url, "sk-not-mapped").responses.create({
        model: TEST_MODEL,
        input: "shared",
        max_output_tokens: 4,
      });
      const beta = client(router.url, "sk-beta");
      assert.equal((await beta.responses.retrieve(made.id)).id, made.id);
      const next = await beta.responses.create({
        model: TEST_MODEL,
        input: "go on",
        max_output_tokens: 4,
        previous_response_id: made.id,
      });
      assert.equal(next.previous_response_id, made.id);
      // The continuation is beta's: only beta reaches it.
      await notFound(client(router.url, "sk-alpha").responses.retrieve(next.id), "alpha on beta's");
      await client(router.url, "sk-not-mapped").responses.delete(made.id);
    });
  });

  test("with no key mapped (the default deployment) every caller reads, continues, cancels and deletes any response, as before", async () => {
    const open = await startRecordingProxy(sim.url);
    const plain = await startTestRouter({ backends: open.url });
    try {
      const one = client(plain.url, "sk-one");
      const other = client(plain.url, "sk-other");
      const made = await one.responses.create({
        model: TEST_MODEL,
        input: "start",
        max_output_tokens: 4,
      });
      assert.equal((await other.responses.retrieve(made.id)).id, made.id);
      const next = await other.responses.create({
        model: TEST_MODEL,
        input: "go on",
        max_output_tokens: 4,
        previous_response_id: made.id,
      });
      assert.equal(next.previous_response_id, made.id);
      await assert.rejects(other.responses.cancel(made.id), OpenAI.BadRequestError);
      await other.responses.delete(made.id);
      await notFound(one.responses.retrieve(made.id), "deleted by the other caller");
      assert.deepEqual(reached(open), [
        "POST /v1/responses",
        `GET /v1/responses/${made.id}`,
        "POST /v1/responses",
        `POST /v1/responses/${made.id}/cancel`,
        `DELETE /v1/responses/${made.id}`,
        `GET /v1/responses/${made.id}`,
      ]);
    } finally {
      await plain.close();
      await open.close();
    }
  });
});
