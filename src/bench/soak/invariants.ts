/**
 * The soak's invariants (`npm run soak`), checked on what the router itself shows: samples of
 * `/programs` and `/backends` taken every few seconds while the load runs, the state once the
 * fleet has drained, and its access log. Pure: sampler.ts and run.ts fetch, these judge, so a
 * test can feed them snapshots. Every time is epoch milliseconds, the router's clock as its
 * views and log lines carry it.
 */

export const INVARIANTS = [
  /** A program REASONING (its request running) with no request in flight, for longer than one lasts. */
  "reasoning-without-request",
  /** A request held longer than the max pause (plus the tick that seats it). */
  "held-past-max-pause",
  /** The books' used tokens below zero, or not back to zero once the fleet has drained. */
  "books",
  /** A program still known after load stopped and the idle timeout passed. */
  "programs-left",
  /** A failed request (5xx, or a stream ended by an error event) no fault explains. */
  "unexplained-failure",
  /** Access log lines and requests sent disagree. */
  "access-log",
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  atMs: number;
  invariant: Invariant;
  detail: string;
}

/** One program as `GET /programs` shows it (the fields the checks read). */
export interface ProgramSample {
  key: string;
  status: string;
  state: string;
  inFlight: number;
  pausedSince: number | null;
}

export interface RouterSample {
  atMs: number;
  programs: readonly ProgramSample[];
  /** `used_tokens` per backend URL (`GET /backends`). */
  usedTokens: Readonly<Record<string, number>>;
}

export interface InvariantLimits {
  /** Longest a request can run once seated (the bound for "reasoning-without-request"). */
  maxRequestMs: number;
  /** The router's `--max-pause`, ms. */
  maxPauseMs: number;
  /** What the bounds allow on top: a tick to act, a sample's age. */
  slackMs: number;
}

export interface InvariantChecker {
  /** Judge one sample; returns the violations it found (each reported once). */
  observe(sample: RouterSample): Violation[];
}

export function createInvariantChecker(limits: InvariantLimits): InvariantChecker {
  /** Since when each program has been seen REASONING with nothing in flight. */
  const idleReasoningSince = new Map<string, number>();
  const reported = new Set<string>();
  const once = (key: string, v: Violation, out: Violation[]) => {
    if (reported.has(key)) return;
    reported.add(key);
    out.push(v);
  };
  return {
    observe(s) {
      const out: Violation[] = [];
      const seen = new Set<string>();
      for (const p of s.programs) {
        if (p.status === "reasoning" && p.inFlight === 0) {
          seen.add(p.key);
          const since = idleReasoningSince.get(p.key) ?? s.atMs;
          idleReasoningSince.set(p.key, since);
          if (s.atMs - since > limits.maxRequestMs + limits.slackMs) {
            once(
              `r:${p.key}:${since}`,
              {
                atMs: s.atMs,
                invariant: "reasoning-without-request",
                detail: `program ${p.key} reasoning with no request in flight for ${s.atMs - since} ms (state ${p.state})`,
              },
              out,
            );
          }
        }
        if (p.state === "paused" && p.inFlight > 0 && p.pausedSince !== null) {
          const held = s.atMs - p.pausedSince;
          if (held > limits.maxPauseMs + limits.slackMs) {
            once(
              `h:${p.key}:${p.pausedSince}`,
              {
                atMs: s.atMs,
                invariant: "held-past-max-pause",
                detail: `program ${p.key} paused ${held} ms with ${p.inFlight} request(s) in flight (max pause ${limits.maxPauseMs} ms)`,
              },
              out,
            );
          }
        }
      }
      // Only programs still idle-reasoning keep their start time (the map stays live-sized).
      for (const key of idleReasoningSince.keys()) {
        if (!seen.has(key)) idleReasoningSince.delete(key);
      }
      for (const [url, used] of Object.entries(s.usedTokens)) {
        if (used < -BOOK_DRIFT_TOKENS) {
          once(
            `b:${url}`,
            { atMs: s.atMs, invariant: "books", detail: `backend ${url} ${usedText(used)} < 0` },
            out,
          );
        }
      }
      return out;
    },
  };
}

/**
 * How far a book may sit from its true value and count as it: the core keeps fractional
 * headroom (a learned growth times steps) in running sums, whose floating-point rounding leaves
 * residues like 5e-11 once every program has gone; its own audit (src/core/audit.ts) allows the
 * same. `bookDrift` reports them.
 */
export const BOOK_DRIFT_TOKENS = 1e-6;

function usedText(used: number): string {
  return `used_tokens ${used}`;
}

/** The largest residue within the drift allowance in a sample's books (0 when none). */
export function bookDrift(s: RouterSample): number {
  let worst = 0;
  for (const used of Object.values(s.usedTokens)) {
    if (Math.abs(used) <= BOOK_DRIFT_TOKENS && Math.abs(used) > Math.abs(worst)) worst = used;
  }
  return worst;
}

/** Once load has stopped and the idle timeout has passed: no program, no token booked. */
export function drainedViolations(s: RouterSample): Violation[] {
  const out: Violation[] = [];
  if (s.programs.length > 0) {
    const states = new Map<string, number>();
    for (const p of s.programs) {
      const k = `${p.status}/${p.state}/in_flight=${p.inFlight}`;
      states.set(k, (states.get(k) ?? 0) + 1);
    }
    out.push({
      atMs: s.atMs,
      invariant: "programs-left",
      detail: `${s.programs.length} programs left (${[...states].map(([k, n]) => `${n} ${k}`).join(", ")}), e.g. ${s.programs
        .slice(0, 3)
        .map((p) => p.key)
        .join(", ")}`,
    });
  }
  for (const [url, used] of Object.entries(s.usedTokens)) {
    if (Math.abs(used) > BOOK_DRIFT_TOKENS) {
      out.push({
        atMs: s.atMs,
        invariant: "books",
        detail: `backend ${url} ${usedText(used)} after the fleet drained (want 0)`,
      });
    }
  }
  return out;
}

/** One access log line (the fields the checks read). */
export interface AccessLine {
  /** When the answer ended. */
  endMs: number;
  durationMs: number;
  path: string;
  status: number;
  backend: string | null;
  error: string | null;
  heldMs: number | null;
}

/** Parse an access log line (pino JSON, `msg: "request"`); null for any other line. */
export function parseAccessLine(line: string): AccessLine | null {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line);
  } catch {
    return null;
  }
  if (rec.msg !== "request" || typeof rec.status !== "number" || typeof rec.path !== "string")
    return null;
  const time = typeof rec.time === "number" ? rec.time : Date.parse(String(rec.time));
  return {
    endMs: time,
    durationMs: typeof rec.durationMs === "number" ? rec.durationMs : 0,
    path: rec.path,
    status: rec.status,
    backend: typeof rec.backend === "string" ? rec.backend : null,
    error: typeof rec.error === "string" ? rec.error : null,
    heldMs: typeof rec.heldMs === "number" ? rec.heldMs : null,
  };
}

/**
 * A client that hung up: `499 client_closed`, or a 200 whose head (a held or relaying stream)
 * was out when it left. Its own act, not a failure of the router.
 */
const CLIENT_CLOSED = "client_closed";

/** A request the router failed: a 5xx, or a 200 stream ended by an error event. */
export function isFailure(l: AccessLine): boolean {
  if (l.error === CLIENT_CLOSED) return false;
  return l.status >= 500 || (l.status < 300 && l.error !== null);
}

/** A fault's window, with the backend it hit (URL, or null for the clients' faults). */
export interface FaultWindow {
  id: number;
  kind: string;
  startMs: number;
  endMs: number;
  backend: string | null;
}

export interface Attribution {
  /** Failed requests each fault explains, by fault id. */
  explained: Map<number, number>;
  unexplained: AccessLine[];
}

/**
 * Which fault explains each failed request: one whose window (stretched by `graceMs` after its
 * end, the router's time to notice a backend is back) the request overlapped, on the backend
 * the request ran on; a request that ran nowhere (no backend in its line) is explained by any
 * fault then, and a clients' fault (a burst) by any failure in its window. A failure no window
 * explains is reported.
 */
export function attributeFailures(
  lines: readonly AccessLine[],
  faults: readonly FaultWindow[],
  graceMs: number,
): Attribution {
  const explained = new Map<number, number>();
  const unexplained: AccessLine[] = [];
  for (const l of lines) {
    if (!isFailure(l)) continue;
    const start = l.endMs - l.durationMs;
    const f = faults.find(
      (w) =>
        start <= w.endMs + graceMs &&
        l.endMs >= w.startMs &&
        (w.backend === null || l.backend === null || l.backend === w.backend),
    );
    if (f === undefined) unexplained.push(l);
    else explained.set(f.id, (explained.get(f.id) ?? 0) + 1);
  }
  return { explained, unexplained };
}

/** Lines whose router hold passed the max pause (the access log's `heldMs`). */
export function heldTooLong(lines: readonly AccessLine[], limits: InvariantLimits): Violation[] {
  return lines
    .filter((l) => l.heldMs !== null && l.heldMs > limits.maxPauseMs + limits.slackMs)
    .map((l) => ({
      atMs: l.endMs,
      invariant: "held-past-max-pause" as const,
      detail: `a ${l.path} request was held ${l.heldMs} ms (status ${l.status}, max pause ${limits.maxPauseMs} ms)`,
    }));
}

/** One path's requests against the access log lines the router (every cell, summed) wrote. */
export interface AccessCount {
  path: string;
  sent: number;
  /** Given up by the client before any answer: the router may never have read them. */
  gaveUp: number;
  /** Access log lines, summed over the cells. */
  lines: number;
  /**
   * Behind HAProxy: its retries on another cell (a request one cell refused with a 503, or one
   * a dead cell never answered), each a line more than requests sent.
   */
  retried: number;
  /**
   * Behind HAProxy: requests that failed at the client while a cell was killed. The killed
   * cell dies before it logs the ones it was answering, so each may be a line fewer.
   */
  lostWithCell: number;
}

/**
 * The access log keeps one line per request the router read: at most one per request sent
 * (plus one per retry on another cell), at least one per request sent that was not given up
 * before an answer nor taken down with a killed cell. Null when the count holds.
 */
export function accessLogViolation(c: AccessCount, atMs: number): Violation | null {
  const max = c.sent + c.retried;
  const min = c.sent - c.gaveUp - c.lostWithCell;
  if (c.lines <= max && c.lines >= min) return null;
  return { atMs, invariant: "access-log", detail: accessCountText(c) };
}

export function accessCountText(c: AccessCount): string {
  const cells =
    c.retried > 0 || c.lostWithCell > 0
      ? `, ${c.retried} retried on another cell, ${c.lostWithCell} failed while a cell was killed`
      : "";
  return `${c.path}: ${c.sent} requests sent (${c.gaveUp} given up before an answer${cells}), ${c.lines} access log lines`;
}

/** Whether `atMs` falls in one of `windows`, each stretched by `graceMs` after its end. */
export function inAnyWindow(
  atMs: number,
  windows: readonly { startMs: number; endMs: number }[],
  graceMs: number,
): boolean {
  return windows.some((w) => atMs >= w.startMs && atMs <= w.endMs + graceMs);
}
