/**
 * The router in an HTTP server. Its own (`startRouter`, what `maitred serve` runs): Node's
 * server over the router's app, its part in the shutdown (stop accepting, let the last answers
 * out, close the connections), and a listen whose failures the operator can fix read as
 * configuration errors. A host's (`createRouter`): the app's `fetch` and a `node:http` listener.
 */
import { once } from "node:events";
import type { Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer, getRequestListener, type HttpBindings } from "@hono/node-server";
import { ConfigError } from "../errors.ts";
import { answerClientError, refuseExpectation } from "../proxy/client-error.ts";
import type { Router, RouterApp } from "./router-api.ts";
import type { ServerPart } from "./router-lifecycle.ts";

export interface RouterServer {
  /** What the server adds to the router's shutdown. */
  readonly part: ServerPart;
  /** Listen; resolves with the port (the one chosen for port 0). */
  listen(port: number, host: string): Promise<number>;
}

export function createRouterServer(app: RouterApp, isStopping: () => boolean): RouterServer {
  // An HTTP/1.0 request may come without a Host header (health checkers send them so); the
  // adapter builds each request's URL from it, and would refuse one without it.
  const server = createAdaptorServer({ fetch: app.fetch, hostname: "localhost" }) as Server;
  server.on("clientError", answerClientError);
  server.on("checkExpectation", refuseExpectation);
  // Responses not yet complete, so shutdown can wait for the last bytes (not only for the
  // request's end) before closing connections. Requests that come in on kept-alive
  // connections after shutdown began get their 503 and then the connection closes.
  const openResponses = new Set<ServerResponse>();
  server.prependListener("request", (_req, res) => {
    if (isStopping()) res.shouldKeepAlive = false;
    openResponses.add(res);
    res.once("close", () => openResponses.delete(res));
  });
  let serverClosed: Promise<void> = Promise.resolve();
  return {
    part: {
      stopAccepting() {
        serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      },
      async settle(graceOver, endGrace) {
        // The last answers (503s to parked requests, stream tails) may still be on their way
        // out; once every response is complete, kept-alive connections are idle and can be
        // closed. Whatever is left when the grace period ends is cut.
        await Promise.race([
          Promise.all([...openResponses].map((r) => once(r, "close"))),
          graceOver,
        ]);
        server.closeIdleConnections();
        await Promise.race([serverClosed, graceOver]);
        endGrace();
        server.closeAllConnections();
        await serverClosed;
      },
    },
    async listen(port, host) {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve();
        });
      });
      return (server.address() as AddressInfo).port;
    },
  };
}

/** Why a listen fails that the operator can fix, in the words of the setting that causes it. */
const LISTEN_FAULTS: Record<string, string> = {
  EADDRINUSE:
    "the address is already in use (another process listens there; pick another --port or stop it)",
  EACCES: "permission denied: ports below 1024 need privileges; pick a higher --port",
  EADDRNOTAVAIL: "no such address on this machine; check --host",
};

/** A listen failure the operator can fix is a configuration error (one line, exit 2). */
export function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const why = code === undefined ? undefined : LISTEN_FAULTS[code];
  if (why === undefined) return err;
  return new ConfigError("port", `cannot listen on ${host}:${port} (${code}): ${why}`);
}

/** The URL clients reach a router listening on `host`:`port` at (loopback for a wildcard). */
export function urlOf(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

const NEEDS_NODE =
  "maitred's router answers on Node's own request and response: serve its fetch with @hono/node-server (serve, createAdaptorServer, getRequestListener) or use router.listener in a node:http server";

/** The app's `fetch` for a host server: it needs Node's request and response, and says so. */
export function nodeFetch(app: RouterApp): Router["fetch"] {
  return (request, env) => {
    const node = env as Partial<HttpBindings> | undefined;
    if (node?.incoming === undefined || node.outgoing === undefined)
      throw new TypeError(NEEDS_NODE);
    return app.fetch(request, env as HttpBindings);
  };
}

/**
 * The app as a `node:http` listener, made on first use: @hono/node-server's listener replaces
 * the global Request and Response with its own when it is made, which a router mounted in a
 * Hono app has no need of.
 */
export function lazyListener(app: RouterApp): () => Router["listener"] {
  let listener: Router["listener"] | null = null;
  return () => {
    // An HTTP/1.0 request may come without a Host header (health checkers send them so); the
    // adapter builds each request's URL from it, and would refuse one without it.
    listener ??= getRequestListener(app.fetch, { hostname: "localhost" });
    return listener;
  };
}
