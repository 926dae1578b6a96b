/**
 * `bench:proxy`'s worker threads (started by proxy-workers.ts, never imported): the fast
 * upstream, its counters asked for by message, or the load generator, one command at a time.
 * Each in a thread of its own, so that neither's CPU is counted as the router's when the
 * router runs in the main thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import { startFastUpstream } from "./fast-upstream.ts";
import { type LoadCommand, runLoad, SSE_CHUNKS } from "./proxy-load.ts";

const port = parentPort;
if (port === null) throw new Error("proxy-worker.ts runs as a worker thread");
if ((workerData as { role: string }).role === "upstream") {
  const upstream = await startFastUpstream(SSE_CHUNKS);
  port.on("message", (m: { type?: string }) => {
    if (m.type === "stats") port.postMessage({ stats: upstream.stats() });
  });
  port.postMessage({ url: upstream.url });
} else {
  port.on("message", (cmd: LoadCommand) => {
    runLoad(cmd).then(
      (r) => port.postMessage({ ok: r }),
      (e: Error) => port.postMessage({ error: e.message }),
    );
  });
}
