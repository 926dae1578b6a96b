/**
 * HAProxy as `npm run bench:cells` runs it: the configuration `maitred cells haproxy-config`
 * writes, plus the bench's log line per request (haproxy-log.ts), each line parsed as it comes;
 * and how far HAProxy's log clock is from the driver's.
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { type Cell, haproxyConfig } from "../../cells/haproxy-config.ts";
import { IDENTITY_SOURCES } from "../../config/identity-sources.ts";
import { type Clock, wallClock } from "../../runtime/clock.ts";
import { abortableSleep } from "../closed-loop.ts";
import { startHaproxy } from "../haproxy-process.ts";
import { median } from "../percentile.ts";
import type { Closers } from "./closers.ts";
import {
  type HapEvent,
  type HapRequest,
  parseRequestLine,
  parseStateLine,
  withRequestLog,
} from "./haproxy-log.ts";

/**
 * glibc keeps freed heap up to these sizes instead of giving it back (`--haproxy-no-trim`):
 * trim threshold and top pad 256 MiB, and 1 MiB buffers from the heap, not mmap.
 */
export const NO_TRIM =
  "glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=268435456:glibc.malloc.mmap_threshold=33554432";
/** How long HAProxy gets to see every cell UP. */
const READY_TIMEOUT_MS = 30_000;
/** Health checks sent through HAProxy to measure its log clock against the driver's. */
const SKEW_PROBES = 20;
/** HAProxy logs a request once it has ended: the wait before its line is looked for. */
export const LOG_LAG_MS = 200;

export interface BenchHaproxy {
  url: string;
  pid: number;
  /** Every request it has logged so far, on the driver's clock (less the skew). */
  requests: HapRequest[];
  /** Every server state change it has logged so far. */
  events: HapEvent[];
  waitAllUp(names: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export interface BenchHaproxyOptions {
  cells: readonly Cell[];
  bodyBufferBytes: number;
  /** Heap trimming off (`--haproxy-no-trim`). */
  noTrim: boolean;
  /** Each line it logs is also appended here. */
  logFile?: string;
  /**
   * HAProxy's time (the system clock) minus the driver's clock, both ms since the epoch; what
   * is left between the two is measured (`clockSkew`) and taken out before the log is read.
   */
  clockOffsetMs: number;
}

/** The bench's configuration: the generated one with a log line per request. */
export function benchConfig(
  cells: readonly Cell[],
  bind: string,
  statsBind: string,
  bodyBufferBytes: number,
): string {
  return withRequestLog(
    haproxyConfig({ cells, bind, statsBind, identityOrder: IDENTITY_SOURCES, bodyBufferBytes }),
  );
}

/**
 * What HAProxy's log lines say, gathered as they come: requests (times moved by
 * `clockOffsetMs`) and the ring's state changes, stamped with `now()` when seen.
 */
export function hapLogReader(clockOffsetMs: number, now: () => number) {
  const requests: HapRequest[] = [];
  const events: HapEvent[] = [];
  const onLine = (line: string) => {
    const at = now();
    if (line.startsWith("REQ ")) {
      const r = parseRequestLine(line, clockOffsetMs);
      if (r !== null) requests.push(r);
      return;
    }
    const change = parseStateLine(line);
    if (change !== null) events.push({ atMs: at, ...change });
  };
  return { requests, events, onLine };
}

/** HAProxy in front of `o.cells` (haproxy-process.ts), registered to be stopped. */
export async function startBenchHaproxy(
  o: BenchHaproxyOptions,
  closers: Closers,
): Promise<BenchHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), "bench-cells-"));
  const removeDir = closers.own(async () => rmSync(dir, { recursive: true, force: true }));
  const reader = hapLogReader(o.clockOffsetMs, () => wallClock.now());
  const { logFile } = o;
  const hap = await startHaproxy({
    cells: o.cells,
    dir,
    config: (bind, statsBind) => benchConfig(o.cells, bind, statsBind, o.bodyBufferBytes),
    env: o.noTrim ? { ...process.env, GLIBC_TUNABLES: NO_TRIM } : process.env,
    onLine: (line) => {
      if (logFile !== undefined) appendFileSync(logFile, `${line}\n`);
      reader.onLine(line);
    },
  });
  const stop = closers.own(async () => {
    await hap.close();
    await removeDir();
  });
  return {
    url: hap.url,
    pid: hap.pid,
    requests: reader.requests,
    events: reader.events,
    waitAllUp: (names) => hap.waitUp(names, READY_TIMEOUT_MS),
    close: stop,
  };
}

/** The median of where the log puts each request's start less when it was sent (by path). */
export function skewOf(requests: readonly HapRequest[], sent: ReadonlyMap<string, number>): number {
  const d = requests
    .filter((r) => sent.has(r.path))
    .map((r) => r.startMs - (sent.get(r.path) as number));
  return d.length === 0 ? 0 : median(d);
}

/**
 * Where HAProxy's log puts a request's start, minus when this process sent it (median of 20
 * health checks through its frontend). HAProxy stamps its log from the system clock as it read
 * it at its last wake-up, the driver reads a monotonic clock anchored at the epoch: the two
 * need not agree to the millisecond, and the log is matched to the driver's requests and to
 * the kill by time.
 */
export async function clockSkew(
  hap: Pick<BenchHaproxy, "url" | "requests">,
  tag: string,
  clock: Clock = wallClock,
): Promise<number> {
  const pool = new Pool(hap.url, { connections: 1 });
  const sent = new Map<string, number>();
  try {
    for (let i = 0; i < SKEW_PROBES; i++) {
      const path = `/health?bench-clock=${tag}-${i}`;
      sent.set(path, clock.now());
      const res = await pool.request({ method: "GET", path });
      await res.body.dump();
    }
  } finally {
    await pool.close();
  }
  await abortableSleep(clock, LOG_LAG_MS, new AbortController().signal);
  return skewOf(hap.requests, sent);
}
