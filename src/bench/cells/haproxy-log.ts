/**
 * HAProxy's own record of each request, for `npm run bench:cells`: a log line per request the
 * bench adds to the generated configuration (which logs state changes only), and the parsers of
 * those lines and of HAProxy's server state changes. What the bench reads from them (affinity,
 * moves, retries, latency added) is in cells-analysis.ts.
 */
import { HASH_BACKEND } from "../haproxy-process.ts";

/**
 * One request as HAProxy logged it; times in the reader's clock (ms since the epoch). On a
 * keep-alive connection HAProxy's accept date is the end of the previous request, so the
 * request itself starts after the handshake and idle times (`%Th`, `%Ti`).
 */
export interface HapRequest {
  /** The request's first byte reached HAProxy. */
  startMs: number;
  /** HAProxy had sent it to the cell that answered (after any retries): start + TR + Tw + Tc. */
  sentMs: number;
  /** Its last byte went out (start + Ta). */
  endMs: number;
  /** The cell that served it last (`<NOSRV>`: none). */
  server: string;
  program: string | null;
  status: number;
  /** `%TR`, `%Tw`, `%Tc`, `%Tr`, `%Ta` (ms; -1 where the step never happened). */
  tR: number;
  tw: number;
  tc: number;
  tr: number;
  ta: number;
  /** HAProxy's retries of it (on another cell: `option redispatch`). */
  retries: number;
  /** Termination state, `----` for a request that ended normally. */
  term: string;
  method: string;
  path: string;
}

/** A server's state change as HAProxy logged it, stamped when the reader saw the line. */
export interface HapEvent {
  atMs: number;
  server: string;
  state: "UP" | "DOWN";
}

/**
 * Bench-only lines of the client frontend: one log line per request at `info` on HAProxy's
 * stdout (the generated file logs `notice` and up only, so state changes but no requests).
 */
const LOG_LINES = [
  "    # bench-cells: one line per request, parsed by the bench.",
  "    no log",
  "    log stdout format raw local0 info",
  '    log-format "REQ %Ts.%ms %b %s %[var(txn.program)] %ST %Th/%Ti/%TR/%Tw/%Tc/%Tr/%Ta %rc %tsc %B %HM %HU"',
];

/** The generated configuration with the request log lines added to its client frontend. */
export function withRequestLog(config: string): string {
  const frontend = /^frontend maitred\n {4}bind [^\n]*\n/m;
  if (!frontend.test(config)) throw new Error("generated HAProxy config has no `frontend maitred`");
  return config.replace(frontend, (m) => `${m}${LOG_LINES.join("\n")}\n`);
}

const REQ_LINE = new RegExp(
  "^REQ (\\d+)\\.(\\d{3}) (\\S+) (\\S+) (\\S+) (-?\\d+) " +
    Array(7).fill("(-?\\d+)").join("/") +
    " (\\+?)(\\d+) (\\S+) (\\d+) (\\S+) (\\S+)",
);
const STATE_LINE = new RegExp(`^Server ${HASH_BACKEND}/(\\S+) is (UP|DOWN)\\b`);

/**
 * A request log line (`REQ …`), its times moved into the reader's clock: `clockOffsetMs` is
 * HAProxy's time (the system clock) minus the reader's, both ms since the epoch. Null for any
 * other line.
 */
export function parseRequestLine(line: string, clockOffsetMs: number): HapRequest | null {
  const m = REQ_LINE.exec(line);
  if (m === null) return null;
  const [th, ti, tR, tw, tc, tr, ta] = m.slice(7, 14).map(Number);
  const startMs = Number(m[1]) * 1000 + Number(m[2]) - clockOffsetMs + th + ti;
  return {
    startMs,
    sentMs: startMs + Math.max(0, tR) + Math.max(0, tw) + Math.max(0, tc),
    endMs: startMs + Math.max(0, ta),
    server: m[4],
    program: m[5] === "-" ? null : m[5],
    status: Number(m[6]),
    tR,
    tw,
    tc,
    tr,
    ta,
    retries: Number(m[15]),
    term: m[16],
    method: m[18],
    path: m[19],
  };
}

/** A server of the hash ring going UP or DOWN, from HAProxy's log; null for any other line. */
export function parseStateLine(line: string): Omit<HapEvent, "atMs"> | null {
  const m = STATE_LINE.exec(line);
  return m === null ? null : { server: m[1], state: m[2] as "UP" | "DOWN" };
}
