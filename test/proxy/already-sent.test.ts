import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { Hono } from "hono";
import { alreadySent } from "../../src/proxy/already-sent.ts";

/**
 * A route that writes its answer on Node's response and returns a marker, served the way
 * maitred serves (getRequestListener, which replaces the global Response with the adapter's
 * own). Every console.error the adapter prints is kept.
 */
function rawRoute(marker: () => Response) {
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.get("/raw", async (c) => {
    c.env.outgoing.writeHead(200, { "content-type": "text/plain" });
    c.env.outgoing.end("written by the route");
    return marker();
  });
  return app;
}

describe("alreadySent: a route that wrote its own answer", () => {
  const printed: unknown[][] = [];
  const original = console.error;
  let server: Server;
  let url = "";
  let useMarker: () => Response = alreadySent;
  let handled: Promise<unknown> = Promise.resolve();

  before(async () => {
    console.error = (...args: unknown[]) => printed.push(args);
    const listener = getRequestListener(rawRoute(() => useMarker()).fetch);
    // The adapter's listener settles once it has finished with the response, after the client
    // may already have read it: each request waits for it before looking at what was printed.
    server = createServer((req, res) => {
      handled = listener(req, res).catch((err: unknown) => printed.push([err]));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/raw`;
  });
  after(async () => {
    console.error = original;
    await new Promise((resolve) => server.close(resolve));
  });

  it("is left alone by the adapter once it has replaced the global Response: no second head, nothing printed", async () => {
    printed.length = 0;
    useMarker = alreadySent;
    const res = await fetch(url);
    assert.equal(await res.text(), "written by the route");
    await handled;
    const traces = printed.filter((a) => String(a[0]).includes("ERR_HTTP_HEADERS_SENT"));
    assert.deepEqual(
      traces,
      [],
      "the adapter printed a stack trace: got these console.error calls, want none",
    );
  });

  it("is needed: the same marker built from the replaced global Response makes the adapter print ERR_HTTP_HEADERS_SENT", async () => {
    printed.length = 0;
    useMarker = () => new Response(null, { headers: { "x-hono-already-sent": "true" } });
    const res = await fetch(url);
    assert.equal(await res.text(), "written by the route");
    await handled;
    const traces = printed.filter((a) => String(a[0]).includes("ERR_HTTP_HEADERS_SENT"));
    assert.equal(
      traces.length,
      1,
      "the adapter's fast path should write a second head; if it no longer does, alreadySent() may go",
    );
  });
});
