/**
 * How `bench:memory` reads a router's memory from outside: its resident set from /proc, its V8
 * heap in use from its /metrics, the live programs it counts, and a full garbage collection
 * asked of it first through its inspector, since garbage would otherwise drown a hundred
 * programs' few hundred KB. It also makes the live programs: one short request each.
 */
import { median } from "../percentile.ts";
import { processRssBytes } from "../process-stats.ts";

/** A sample's value on a Prometheus text page (read from `where`); throws when it lacks it. */
export function metricValue(text: string, name: string, where = "the page"): number {
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, "m").exec(text);
  if (m === null) throw new Error(`${name} not on ${where}`);
  return Number(m[1]);
}

/** Live programs, by the router's own count (`maitred_programs`, every status and state). */
export function liveProgramsOn(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/^maitred_programs\{[^}]*\} ([0-9.e+-]+)$/gm)) n += Number(m[1]);
  return n;
}

const metricsPage = async (url: string) => (await fetch(`${url}/metrics`)).text();

/** The router's live programs, from its /metrics. */
export const livePrograms = async (url: string) => liveProgramsOn(await metricsPage(url));

/**
 * A full garbage collection in the process whose inspector listens on `inspectPort`, asked
 * over the DevTools protocol (HeapProfiler.collectGarbage, through Node's own WebSocket).
 */
export async function collectGarbage(inspectPort: number): Promise<void> {
  const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  if (target === undefined) throw new Error("the router's inspector lists no target");
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  await new Promise<void>((resolve, reject) => {
    ws.onmessage = (m) => {
      const reply = JSON.parse(String(m.data)) as { id?: number; error?: unknown };
      if (reply.id !== 1) return;
      if (reply.error === undefined) resolve();
      else reject(new Error(JSON.stringify(reply.error)));
    };
    ws.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
  });
  ws.close();
}

export interface MemoryReading {
  rssBytes: number;
  heapUsedBytes: number;
}

/** One read of a router: its RSS and its heap in use. */
export interface MemoryProbe {
  /** Waits between two reads, so that the router settles. */
  wait(): Promise<void>;
  read(): Promise<MemoryReading>;
}

/** The probe of a router process (`pid`, `url`) whose inspector listens on `inspectPort`. */
export function routerProbe(
  router: { pid: number; url: string },
  inspectPort: number,
  everyMs: number,
): MemoryProbe {
  return {
    wait: () => new Promise((resolve) => setTimeout(resolve, everyMs)),
    async read() {
      await collectGarbage(inspectPort);
      const page = await metricsPage(router.url);
      const heapUsedBytes = metricValue(
        page,
        "nodejs_heap_size_used_bytes",
        `${router.url}/metrics`,
      );
      return { rssBytes: processRssBytes(router.pid), heapUsedBytes };
    },
  };
}

/**
 * The settled figures over `reads` reads of an idling router: the median RSS (a read caught
 * mid-allocation is an outlier) and the smallest heap (what no garbage is left in).
 */
export async function settledMemory(probe: MemoryProbe, reads: number): Promise<MemoryReading> {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < reads; i++) {
    await probe.wait();
    const r = await probe.read();
    heap.push(r.heapUsedBytes);
    rss.push(r.rssBytes);
  }
  return { rssBytes: median(rss), heapUsedBytes: Math.min(...heap) };
}

/**
 * One short request (`max_tokens` 1) for each of the programs `from`..`to` − 1, `concurrency`
 * at a time, each named by its own `x-program-id`; with `named` false, the same requests
 * without a program id (each a program of one step, released when it ends: nothing stays
 * live). Returns how many were not answered 200.
 */
export async function createPrograms(o: {
  url: string;
  model: string;
  from: number;
  to: number;
  concurrency: number;
  named?: boolean;
}): Promise<number> {
  let next = o.from;
  let failed = 0;
  const worker = async () => {
    while (next < o.to) {
      const i = next++;
      const res = await fetch(`${o.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(o.named === false ? {} : { "x-program-id": `mem-${i}` }),
        },
        body: JSON.stringify({
          model: o.model,
          messages: [{ role: "user", content: `program ${i}: say one word` }],
          max_tokens: 1,
        }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  return failed;
}
