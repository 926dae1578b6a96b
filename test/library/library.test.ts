/**
 * maitred as a library, imported by the package's name as a program that embeds it would:
 * `"maitred"` resolves to this repository itself (Node's package self-reference), to
 * src/index.ts under the `maitred-source` condition that `npm test` and `npm run typecheck`
 * set (run alone: `node --conditions=maitred-source --test test/library/library.test.ts`).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { ConfigError, createRouter, type Router, resolveRouterConfig } from "maitred";
import { createManualClock } from "../../src/runtime/clock.ts";
import { type Logger, silentLogger } from "../../src/util/logger.ts";
import { type FakeBackend, startFakeBackend } from "../integration/helpers/fake-backend.ts";

describe("library", () => {
  let backend: FakeBackend;

  before(async () => {
    backend = await startFakeBackend({ tokens: 3 });
  });
  after(async () => {
    await backend.close();
  });

  async function listen(server: Server): Promise<string> {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  function closeServer(server: Server): Promise<void> {
    return new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  }

  async function chat(url: string, programId: string): Promise<Response> {
    return fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        program_id: programId,
        messages: [{ role: "user", content: "hello" }],
      }),
    });
  }

  /** The router with the manual clock: its ticks only move when the test says so. */
  function routerFor(settings: Parameters<typeof createRouter>[0]): Promise<Router> {
    return createRouter(settings, { clock: createManualClock(1_000_000), logger: silentLogger });
  }

  test("mounted under /llm in a Hono app, the router answers a chat completion from its backend", async () => {
    const router = await routerFor({ backends: [backend.url], router: "tr" });
    const app = new Hono();
    app.get("/", (c) => c.text("the host's own route"));
    app.route("/llm", router.app);
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    const url = await listen(server);
    try {
      await router.start();
      const res = await chat(`${url}/llm/v1/chat/completions`, "lib-hono");
      assert.equal(res.status, 200);
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      assert.equal(body.choices[0].message.content, "t1t2t3");
      const seen = backend.received.filter((r) => r.path === "/v1/chat/completions").at(-1);
      assert.equal(seen?.body.program_id, undefined, "the backend sees no program id");
      assert.deepEqual(seen?.body.messages, [{ role: "user", content: "hello" }]);

      assert.equal(await (await fetch(`${url}/`)).text(), "the host's own route");
      const health = await fetch(`${url}/llm/health`);
      assert.equal(health.status, 200);
      assert.equal(router.loop.scheduler.program("lib-hono")?.id, "lib-hono");
      assert.match(await router.metrics.render(), /maitred_programs/);
      assert.ok(router.poller.latest(backend.url), "the first tick polled the backend");
      assert.ok(router.metrics.registry.getSingleMetric("maitred_programs"));
    } finally {
      await router.close();
      await closeServer(server);
    }
  });

  test("a plain node:http server hands its /llm requests to router.listener", async () => {
    // A whole configuration, resolved as the CLI resolves one, is taken as it is.
    const config = resolveRouterConfig({ flags: { backends: backend.url } });
    const router = await routerFor(config);
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/llm/")) {
        req.url = req.url.slice("/llm".length);
        void router.listener(req, res);
      } else {
        res.writeHead(404).end();
      }
    });
    const url = await listen(server);
    try {
      await router.start();
      await router.start(); // once started, starting again changes nothing
      const res = await chat(`${url}/llm/v1/chat/completions`, "lib-http");
      assert.equal(res.status, 200);
      assert.ok(res.headers.get("x-request-id"), "the router's own headers come through");
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      assert.equal(body.choices[0].message.content, "t1t2t3");
      assert.equal((await fetch(`${url}/other`)).status, 404);
    } finally {
      await router.close();
      await closeServer(server);
    }
  });

  test("the router's fetch needs Node's request and response, and says so; closed, it does not start", async () => {
    const router = await routerFor({ backends: backend.url });
    try {
      assert.throws(() => router.fetch(new Request("http://router/health")), /node-server/);
    } finally {
      await router.close();
    }
    await assert.rejects(router.start(), /closed before it started/);
  });

  test("a stop asked for while start() waits on a frozen backend ends the start and closes the router", async () => {
    const frozen = await startFakeBackend();
    frozen.freezeMetrics(true);
    const stop = new AbortController();
    const router = await createRouter(
      { backends: frozen.url },
      { clock: createManualClock(0), logger: silentLogger, signal: stop.signal },
    );
    try {
      const starting = router.start();
      while (!frozen.received.some((r) => r.path === "/metrics"))
        await new Promise((resolve) => setImmediate(resolve));
      stop.abort(new Error("stopped during start-up"));
      await assert.rejects(starting, /stopped during start-up/);
      await router.close(); // already closed: the same promise
    } finally {
      await frozen.close();
    }
  });

  test("bad settings reject with a ConfigError naming the setting as it was given", async () => {
    const rejects = (settings: Record<string, unknown>, message: RegExp) =>
      assert.rejects(routerFor(settings), (err: unknown) => {
        assert.ok(err instanceof ConfigError, `not a ConfigError: ${err}`);
        assert.match(err.message, message);
        return true;
      });
    await rejects({ schedulerInterval: "soon" }, /^schedulerInterval: must be a duration/);
    await rejects({ "scheduler-interval": -1 }, /^scheduler-interval: /);
    await rejects({ backends: "ftp://gpu1" }, /^backends: /);
    await rejects({ router: "fastest" }, /^router: /);
    await rejects(
      { schedulerIntervall: 5 },
      /^schedulerIntervall: not a setting.*schedulerInterval/,
    );
    await rejects({ logLevel: "warn", "log-level": "info" }, /^log-level: given twice/);
  });

  test("a router that fails while it is built leaves no simulated backend listening", async () => {
    const urls: string[] = [];
    const logger: Logger = {
      debug() {},
      info(msg, fields) {
        if (msg === "sim-backend listening") urls.push(String(fields?.url));
      },
      warn() {},
      error() {},
      child: () => logger,
    };
    // The profile directory cannot be made under a file: the build fails after the backend ran.
    await assert.rejects(
      createRouter(
        { backends: "sim:1", profile: true, profileDir: "/dev/null/profiles" },
        { logger, clock: createManualClock(0) },
      ),
    );
    assert.equal(urls.length, 1, "the simulated backend had started");
    await assert.rejects(fetch(`${urls[0]}/health`), "it listens no more");
  });
});
