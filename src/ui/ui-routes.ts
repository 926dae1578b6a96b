/**
 * The live page: `GET /ui` and its files, and `GET /ui/events`, one SSE stream of frames
 * (ui-feed.ts) a second. The page and its stream are guarded like the admin routes (the stream
 * shows every program): loopback only without `--admin-token`; with one, a browser that cannot
 * send a bearer header passes it as `?token=`, which the page hands on to its stream. The
 * script and style files show nothing and are open, so the page can load them. The files ship in the package
 * (src/ui/static, and uPlot's build from node_modules); nothing is fetched from elsewhere.
 */
import { readFile } from "node:fs/promises";
import type { HttpBindings } from "@hono/node-server";
import type { Hono } from "hono";
import { Errors } from "../errors.ts";
import { checkAdmin } from "../proxy/admin-access.ts";
import { alreadySent } from "../proxy/already-sent.ts";
import type { Clock, TimerHandle } from "../runtime/clock.ts";
import type { UiFeed } from "./ui-feed.ts";

/** A frame a second: the page's charts move at the pace a person reads them. */
const FRAME_MS = 1000;

const FILES: Record<string, { url: URL; type: string }> = {
  "/ui": { url: new URL("./static/index.html", import.meta.url), type: "text/html; charset=utf-8" },
  "/ui/app.js": {
    url: new URL("./static/app.js", import.meta.url),
    type: "text/javascript; charset=utf-8",
  },
  "/ui/app.css": {
    url: new URL("./static/app.css", import.meta.url),
    type: "text/css; charset=utf-8",
  },
  "/ui/uplot.js": {
    url: new URL(import.meta.resolve("uplot/dist/uPlot.iife.min.js")),
    type: "text/javascript; charset=utf-8",
  },
  "/ui/uplot.css": {
    url: new URL(import.meta.resolve("uplot/dist/uPlot.min.css")),
    type: "text/css; charset=utf-8",
  },
};

export interface UiDeps {
  feed: UiFeed;
  clock: Clock;
  adminToken: string | null;
  /** Shutting down: open streams end at their next frame, so they never hold shutdown up. */
  isDraining(): boolean;
}

type Env = { Bindings: HttpBindings; Variables: { requestId: string } };

export function registerUi<E extends Env>(app: Hono<E>, deps: UiDeps): void {
  const cache = new Map<string, Buffer>();
  for (const [path, file] of Object.entries(FILES)) {
    app.get(path, async (c) => {
      if (path === "/ui") checkAdmin(c.env.incoming, deps.adminToken, c.req.query("token"));
      let body = cache.get(path);
      if (body === undefined) {
        body = await readFile(file.url);
        cache.set(path, body);
      }
      return c.body(new Uint8Array(body), 200, {
        "content-type": file.type,
        "cache-control": "no-cache",
      });
    });
  }
  app.get("/ui/events", (c) => {
    checkAdmin(c.env.incoming, deps.adminToken, c.req.query("token"));
    const res = c.env.outgoing;
    if (res.destroyed) throw Errors.clientClosed();
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    });
    let timer: TimerHandle | null = null;
    const send = () => {
      timer = null;
      if (res.destroyed) return;
      if (deps.isDraining()) {
        res.end();
        return;
      }
      // A client that stops reading misses frames instead of piling them up here.
      if (!res.writableNeedDrain) res.write(`data: ${JSON.stringify(deps.feed.frame())}\n\n`);
      timer = deps.clock.setTimeout(send, FRAME_MS);
    };
    res.on("close", () => timer?.cancel());
    send();
    return alreadySent();
  });
}
