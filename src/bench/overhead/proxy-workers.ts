/**
 * `bench:proxy`'s two worker threads (proxy-worker.ts), seen from the main thread: the fast
 * upstream, as a `CountingUpstream` the tokens phase can measure against, and the load
 * generator, which runs one command at a time.
 */
import { Worker } from "node:worker_threads";
import type { UpstreamStats } from "../upstream/vllm-like-server.ts";
import type { CountingUpstream } from "./proxy-bench-kit.ts";
import type { LoadCommand, LoadResult } from "./proxy-load.ts";

const WORKER = new URL("./proxy-worker.ts", import.meta.url);

/** A command whose count, length and connections default to the run's. */
export type LoadRequest = Omit<LoadCommand, "requests" | "seconds" | "connections"> &
  Partial<LoadCommand>;

export interface ProxyWorkers {
  /** The fast upstream in its thread; `close` leaves it running (`close` below ends it). */
  fast: CountingUpstream;
  load(cmd: LoadRequest): Promise<LoadResult>;
  close(): Promise<void>;
}

/** Both threads started, the upstream listening; `defaults` fill what a command leaves out. */
export async function startProxyWorkers(
  defaults: Pick<LoadCommand, "requests" | "seconds" | "connections">,
): Promise<ProxyWorkers> {
  const upstream = new Worker(WORKER, { workerData: { role: "upstream" } });
  const url = await new Promise<string>((resolve, reject) => {
    upstream.once("error", reject);
    upstream.once("message", (m: { url: string }) => resolve(m.url));
  });
  const loader = new Worker(WORKER, { workerData: { role: "load" } });
  return {
    fast: {
      url,
      stats: () =>
        new Promise((resolve) => {
          upstream.once("message", (m: { stats: UpstreamStats }) => resolve(m.stats));
          upstream.postMessage({ type: "stats" });
        }),
      close: async () => {},
    },
    load: (cmd) =>
      new Promise((resolve, reject) => {
        loader.once("message", (m: { ok?: LoadResult; error?: string }) =>
          m.ok ? resolve(m.ok) : reject(new Error(m.error)),
        );
        loader.postMessage({ ...defaults, ...cmd });
      }),
    close: async () => {
      await loader.terminate();
      await upstream.terminate();
    },
  };
}
