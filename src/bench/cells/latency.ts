/**
 * The latency HAProxy adds, as `npm run bench:cells` measures it with the load stopped:
 * non-streaming chat completions (max_tokens 1) of one program id the hash gives the first
 * cell, one at a time, alternately straight to that cell and through HAProxy, with a small
 * body and with a ~200 KB one (an agent's context is hundreds of KB of JSON), and HAProxy's
 * CPU time per request meanwhile.
 */
import { Pool } from "undici";
import { type Clock, wallClock } from "../../runtime/clock.ts";
import { abortableSleep } from "../closed-loop.ts";
import type { Span } from "./cells-analysis.ts";
import type { HapRequest } from "./haproxy-log.ts";

/** The body of the large latency requests. */
const LARGE_BODY_BYTES = 200 * 1024;
/** Pairs sent before any is measured (fewer when fewer are asked for). */
const WARM_PAIRS = 20;
/** Program ids tried (`latency-<i>`) to find one the hash gives the cell. */
const ID_TRIES = 50;
/** How long HAProxy's log line of a probe request is waited for, and how often looked for. */
const LOG_WAIT_MS = 2000;
const LOG_POLL_MS = 5;

export interface LatencyResult {
  /** Each request's time, ms: straight to the cell, through HAProxy. */
  direct: number[];
  haproxy: number[];
  /** Requests answered with another status than 200. */
  failed: number;
  /** HAProxy's CPU ms per measured request through it. */
  cpuMsPerRequest: number;
}

export interface LatencyMeasure {
  /** The program id every latency request names. */
  id: string;
  smallBytes: number;
  largeBytes: number;
  small: LatencyResult;
  large: LatencyResult;
  /** When each kind was sent, on the driver's clock (to find their lines in HAProxy's log). */
  smallWindow: Span;
  largeWindow: Span;
}

async function timedPost(pool: Pool, body: string): Promise<{ ms: number; ok: boolean }> {
  const t = performance.now();
  const res = await pool.request({
    method: "POST",
    path: "/v1/chat/completions",
    headers: { "content-type": "application/json" },
    body,
  });
  await res.body.arrayBuffer();
  return { ms: performance.now() - t, ok: res.statusCode === 200 };
}

/**
 * `n` requests each way, one at a time, alternating which goes first so neither always follows
 * the other's; `cpuSeconds` reads HAProxy's CPU time.
 */
export async function alternate(
  direct: Pool,
  via: Pool,
  body: string,
  n: number,
  cpuSeconds: () => number,
): Promise<LatencyResult> {
  for (let i = 0; i < Math.min(WARM_PAIRS, n); i++) {
    await timedPost(direct, body);
    await timedPost(via, body);
  }
  const out: LatencyResult = { direct: [], haproxy: [], failed: 0, cpuMsPerRequest: Number.NaN };
  const cpu0 = cpuSeconds();
  for (let i = 0; i < n; i++) {
    const order = i % 2 === 0 ? ([direct, via] as const) : ([via, direct] as const);
    for (const pool of order) {
      const r = await timedPost(pool, body);
      if (!r.ok) out.failed++;
      (pool === direct ? out.direct : out.haproxy).push(r.ms);
    }
  }
  out.cpuMsPerRequest = ((cpuSeconds() - cpu0) * 1000) / Math.max(1, n);
  return out;
}

/** A non-streaming chat completion of one token, of program `id`. */
export const latencyBody = (model: string, id: string, content: string) =>
  JSON.stringify({
    model,
    messages: [{ role: "user", content }],
    max_tokens: 1,
    stream: false,
    program_id: id,
  });

export interface LatencyOptions {
  /** The cell's own address and HAProxy's. */
  directUrl: string;
  viaUrl: string;
  /** The cell's name, as HAProxy's log names the server. */
  cell: string;
  model: string;
  /** HAProxy's log so far, growing as it logs. */
  requests: readonly HapRequest[];
  smallRequests: number;
  largeRequests: number;
  /** HAProxy's CPU seconds so far. */
  cpuSeconds: () => number;
  log: (msg: string) => void;
  clock?: Clock;
}

/** The first `latency-<i>` id HAProxy sent to `o.cell`, by its log; null when none of 50. */
async function findLatencyId(o: LatencyOptions, via: Pool, clock: Clock): Promise<string | null> {
  const never = new AbortController().signal;
  for (let i = 0; i < ID_TRIES; i++) {
    const id = `latency-${i}`;
    await timedPost(via, latencyBody(o.model, id, "hi"));
    const deadline = clock.now() + LOG_WAIT_MS;
    let entry: HapRequest | undefined;
    while (entry === undefined && clock.now() < deadline) {
      entry = o.requests.find((r) => r.program === id);
      if (entry === undefined) await abortableSleep(clock, LOG_POLL_MS, never);
    }
    if (entry?.server === o.cell) return id;
  }
  return null;
}

export async function measureLatency(o: LatencyOptions): Promise<LatencyMeasure> {
  const clock = o.clock ?? wallClock;
  const direct = new Pool(o.directUrl, { connections: 1 });
  const via = new Pool(o.viaUrl, { connections: 1 });
  try {
    const id = await findLatencyId(o, via, clock);
    if (id === null) throw new Error(`no latency-N program id hashed to ${o.cell}`);
    const smallBody = latencyBody(o.model, id, "Say one word.");
    const largeBody = latencyBody(o.model, id, " word".repeat(Math.ceil(LARGE_BODY_BYTES / 5)));
    o.log(`latency: ${o.smallRequests} small and ${o.largeRequests} large requests each way`);
    const smallWindow = { from: clock.now(), to: 0 };
    const small = await alternate(direct, via, smallBody, o.smallRequests, o.cpuSeconds);
    smallWindow.to = clock.now();
    const largeWindow = { from: clock.now(), to: 0 };
    const large = await alternate(direct, via, largeBody, o.largeRequests, o.cpuSeconds);
    largeWindow.to = clock.now();
    const sizes = { smallBytes: smallBody.length, largeBytes: largeBody.length };
    return { id, ...sizes, small, large, smallWindow, largeWindow };
  } finally {
    await direct.close();
    await via.close();
  }
}
