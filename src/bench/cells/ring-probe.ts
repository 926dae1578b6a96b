/**
 * The cell HAProxy's hash gives each program id, for ids HAProxy never saw in the run (the
 * lone-router pass needs the map for them too): the same generated configuration in front of
 * stub servers that answer every request with their name. HAProxy's consistent-hash ring
 * depends on the servers' order and weights, not on their addresses, so this is the real
 * stack's map; the run's own log checks it for every program it saw.
 */
import { createServer, type Server } from "node:http";
import { Pool } from "undici";
import type { Cell } from "../../cells/haproxy-config.ts";
import { startBenchHaproxy } from "./bench-haproxy.ts";
import type { Closers } from "./closers.ts";

/** Requests in flight at once through the probe's HAProxy. */
const PROBE_CONNECTIONS = 8;

/** In-process servers on loopback, one per name, that answer any request with their name. */
export async function startStubCells(
  names: readonly string[],
  closers: Closers,
): Promise<{ cells: Cell[]; close(): Promise<void> }> {
  const stubs: Server[] = [];
  const cells: Cell[] = [];
  const close = closers.own(async () => {
    for (const s of stubs) s.closeAllConnections();
    await Promise.all(stubs.map((s) => new Promise((r) => s.close(r))));
  });
  for (const name of names) {
    const s = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "text/plain");
        res.end(name);
      });
    });
    stubs.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    cells.push({ name, address: `127.0.0.1:${(s.address() as { port: number }).port}` });
  }
  return { cells, close };
}

/** Each id's answer to a chat completion naming it as its program, sent to `url`. */
export async function askEach(url: string, ids: readonly string[]): Promise<Map<string, string>> {
  const pool = new Pool(url, { connections: PROBE_CONNECTIONS });
  const map = new Map<string, string>();
  try {
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++];
        const res = await pool.request({
          method: "POST",
          path: "/v1/chat/completions",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ program_id: id }),
        });
        map.set(id, await res.body.text());
      }
    };
    await Promise.all(Array.from({ length: PROBE_CONNECTIONS }, worker));
  } finally {
    await pool.close();
  }
  return map;
}

export interface RingProbe {
  /** The cells' names, in the run's order. */
  names: readonly string[];
  ids: readonly string[];
  bodyBufferBytes: number;
  noTrim: boolean;
}

/** HAProxy's program → cell map for `o.ids`, HAProxy configured as in the run. */
export async function probeRing(o: RingProbe, closers: Closers): Promise<Map<string, string>> {
  const { names } = o;
  const stubs = await startStubCells(names, closers);
  try {
    const hap = await startBenchHaproxy(
      {
        cells: stubs.cells,
        bodyBufferBytes: o.bodyBufferBytes,
        noTrim: o.noTrim,
        clockOffsetMs: 0,
      },
      closers,
    );
    try {
      await hap.waitAllUp(names);
      return await askEach(hap.url, o.ids);
    } finally {
      await hap.close();
    }
  } finally {
    await stubs.close();
  }
}
