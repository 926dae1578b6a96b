/**
 * The spans `npm run bench:cells` reads its figures over: the four phases on the wall clock,
 * and the calm part of each (no cell changing: after a change, from when HAProxy logged it),
 * and which of HAProxy's log lines and the driver's steps fall in them.
 */
import { CHECK_INTERVAL_MS } from "../../cells/haproxy-config.ts";
import type { RunRecords } from "../records.ts";
import { inWindow, type Span } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import type { HapEvent, HapRequest } from "./haproxy-log.ts";
import { PROGRAM_PREFIX, VICTIM_NAME } from "./stack-shape.ts";

export interface Window extends Span {
  name: string;
}

/** The closed loop's chat completions in HAProxy's log (not its checks or latency requests). */
export const isChat = (r: HapRequest) =>
  r.method === "POST" &&
  r.path.startsWith("/v1/chat/completions") &&
  r.program?.startsWith(`${PROGRAM_PREFIX}p`) === true;

/** The driver's steps answered inside `w` (records count from `t0`). */
export const stepsIn = (records: RunRecords, t0: number, w: Span) =>
  records.steps.filter((s) => inWindow(t0 + s.endMs, w));

export const stepsPerMin = (records: RunRecords, t0: number, w: Span) =>
  (stepsIn(records, t0, w).length * 60_000) / (w.to - w.from);

export interface RunWindows {
  /** warmup, stable, dead, back. */
  phases: Window[];
  /** Each phase less its change's transition (until HAProxy logged it). */
  calm: { stable: Span; dead: Span; back: Span };
  /** When HAProxy logged the victim DOWN after the kill and UP after the restart, if it did. */
  downEv: HapEvent | undefined;
  upEv: HapEvent | undefined;
  /** Those instants, or the longest HAProxy takes when it logged none. */
  downAt: number;
  upAt: number;
}

export function runWindows(
  run: Pick<
    CellsRun,
    "t0" | "stableAt" | "killAt" | "restartAt" | "readyAt" | "endAt" | "hapEvents"
  >,
): RunWindows {
  const { t0, stableAt, killAt, restartAt, readyAt, endAt } = run;
  const downEv = run.hapEvents.find(
    (e) => e.server === VICTIM_NAME && e.state === "DOWN" && e.atMs >= killAt,
  );
  const upEv = run.hapEvents.find(
    (e) => e.server === VICTIM_NAME && e.state === "UP" && e.atMs >= restartAt,
  );
  // Without a logged change, the longest HAProxy takes: `fall`/`rise` 2 checks, plus one.
  const downAt = downEv?.atMs ?? killAt + 3 * CHECK_INTERVAL_MS;
  const upAt = upEv?.atMs ?? readyAt + 3 * CHECK_INTERVAL_MS;
  return {
    phases: [
      { name: "warmup", from: t0, to: stableAt },
      { name: "stable", from: stableAt, to: killAt },
      { name: "dead", from: killAt, to: restartAt },
      { name: "back", from: restartAt, to: endAt },
    ],
    calm: {
      stable: { from: stableAt, to: killAt },
      dead: { from: downAt, to: restartAt },
      back: { from: upAt, to: endAt },
    },
    downEv,
    upEv,
    downAt,
    upAt,
  };
}
