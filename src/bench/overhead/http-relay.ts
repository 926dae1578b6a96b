/**
 * The floor under an HTTP proxy written with the parts maitred is made of (`scripts/http-relay.ts`):
 * Node's HTTP server on the client side and an undici keep-alive pool, called through its
 * dispatcher handler API, on the upstream side, with nothing in between. Each request is read
 * whole and forwarded as it came (hop-by-hop headers aside); the answer's head and each chunk of
 * its body are written to the client as they arrive, with backpressure. `bench:proxy` runs it in
 * its own process in front of the same upstream as maitred and reads its CPU the same way: what
 * it costs per request is what these two HTTP stacks charge before any work of maitred's own.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import { type Dispatcher, Pool } from "undici";
import type { ScriptSpec } from "../script-args.ts";
import { listenLoopback, type Relay } from "./tcp-relay.ts";

export const HTTP_RELAY_SPEC = {
  name: "http-relay",
  usage: "node scripts/http-relay.ts <upstream-url>",
  summary:
    'The floor under an HTTP proxy built as maitred is (Node\'s HTTP server and an undici pool, nothing between); npm run bench:proxy starts it itself. Prints {"url": …} on stdout when ready.',
  runtime: "until stopped (Ctrl-C or SIGTERM)",
  flags: {},
  positionals: [
    { name: "<upstream-url>", description: "where requests go, e.g. http://127.0.0.1:8000" },
  ],
} satisfies ScriptSpec;

/** Whether the relay can forward to `text`: an http(s) URL. */
export function isHttpUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && ["http:", "https:"].includes(url.protocol);
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host"]);

function forwardHeaders(h: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in h) if (!HOP_BY_HOP.has(k)) out[k] = h[k] as string | string[];
  return out;
}

/** The bare HTTP relay in front of `upstreamUrl`, in this process. */
export function listenHttpRelay(upstreamUrl: string): Promise<Relay> {
  const pool = new Pool(upstreamUrl, { connections: 256, pipelining: 1 });
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const body = Buffer.concat(parts);
      let controller: Dispatcher.DispatchController | null = null;
      const resume = () => controller?.resume();
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
        },
        onResponseStart(_c, status, headers) {
          if (status < 200) return; // an informational answer is not the response
          // A stream goes out chunked, as maitred sends it; a whole body keeps its length.
          const sse = String(headers["content-type"] ?? "").includes("text/event-stream");
          const out: Record<string, string | string[]> = {};
          for (const k in headers)
            if (!HOP_BY_HOP.has(k) && !(sse && k === "content-length"))
              out[k] = headers[k] as string | string[];
          res.writeHead(status, out);
        },
        onResponseData(c, chunk) {
          if (!res.write(chunk)) {
            c.pause();
            res.once("drain", resume);
          }
        },
        onResponseEnd() {
          res.end();
        },
        onResponseError(_c, err) {
          res.destroy(err);
        },
      };
      // A client that leaves ends the upstream call (and frees a connection paused for it).
      res.on("close", () => {
        if (!res.writableFinished) controller?.abort(new Error("client closed"));
      });
      pool.dispatch(
        {
          method: req.method ?? "GET",
          path: req.url ?? "/",
          headers: forwardHeaders(req.headers),
          body,
        },
        handler,
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  return listenLoopback(server, () => void pool.destroy());
}
