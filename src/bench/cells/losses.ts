/**
 * What `npm run bench:cells`'s driver lost and where: per phase, requests answered with an
 * error status, cut mid-answer, or hung (a loss counts where it was seen, a hung request where
 * it was sent); which failures were of requests in flight on the killed cell; and what HAProxy
 * said of each failure.
 */
import type { Attempt } from "../trace-client.ts";
import { answered, inWindow, logOf, type Span, within } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import type { HapRequest } from "./haproxy-log.ts";
import { VICTIM_NAME } from "./stack-shape.ts";
import { stepsIn, stepsPerMin, type Window } from "./windows.ts";

/** Where a loss after the last phase is counted. */
export const AFTER_THE_END = "after the end";

export interface PhaseLosses {
  name: string;
  /** Null for the drain after the end. */
  lengthMs: number | null;
  sent: number;
  steps: number | null;
  stepsPerMin: number | null;
  errorStatus: number;
  cut: number;
  hung: number;
  /** Requests HAProxy retried, by its log, where they were sent. */
  retries: number;
}

const isFailed = (x: Attempt) => x.outcome === "failed" || x.outcome === "hung";
const isStatus = (x: Attempt) => x.outcome === "failed" && (x.kind ?? "").startsWith("http_");
const isCut = (x: Attempt) => x.outcome === "failed" && !(x.kind ?? "").startsWith("http_");

type RunPart = Pick<CellsRun, "attempts" | "records" | "t0" | "endAt">;

/** Each phase's requests, steps and losses, then the drain after the end. */
export function phaseLosses(
  run: RunPart,
  phases: readonly Window[],
  chat: readonly HapRequest[],
): PhaseLosses[] {
  const failed = run.attempts.filter(isFailed);
  const phaseOf = (x: Attempt) => {
    const t = x.outcome === "hung" ? x.startMs : (x.endMs as number);
    return phases.find((w) => inWindow(t, w))?.name ?? AFTER_THE_END;
  };
  const names = [...phases.map((w) => w.name), AFTER_THE_END];
  return names.map((name) => {
    const w = phases.find((x) => x.name === name);
    const lost = failed.filter((x) => phaseOf(x) === name);
    const retried = chat.filter(
      (r) => r.retries > 0 && (w ? inWindow(r.startMs, w) : r.startMs >= run.endAt),
    );
    return {
      name,
      lengthMs: w ? w.to - w.from : null,
      sent: run.attempts.filter((x) => (w ? inWindow(x.startMs, w) : false)).length,
      steps: w ? stepsIn(run.records, run.t0, w).length : null,
      stepsPerMin: w ? stepsPerMin(run.records, run.t0, w) : null,
      errorStatus: lost.filter(isStatus).length,
      cut: lost.filter(isCut).length,
      hung: lost.filter((x) => x.outcome === "hung").length,
      retries: retried.length,
    };
  });
}

/** Each kind of failure (with its streaming and HAProxy's view of it) and how many. */
export function failureKinds(
  attempts: readonly Attempt[],
  index: Map<string, HapRequest[]>,
): Map<string, number> {
  const kinds = new Map<string, number>();
  for (const x of attempts.filter(isFailed)) {
    const r = logOf(x, index);
    const hap = r === null ? "no log line" : `${r.server} ${r.status} ${r.term}`;
    const token = x.firstTokenMs === null ? "" : ", after its first token";
    const k = `${x.outcome === "hung" ? "hung" : x.kind} (${x.stream ? "stream" : "plain"}${token}; HAProxy: ${hap})`;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  return kinds;
}

export interface KillLosses {
  failed: Attempt[];
  /** Failures of requests in flight on the victim at the kill, and of any other. */
  lostAtKill: Attempt[];
  lostElse: Attempt[];
  /** Requests in flight at the kill, and those of them the hash gives the victim. */
  wereInFlight: Attempt[];
  onVictim: Attempt[];
  /** The victim's that another cell answered after HAProxy retried them there. */
  savedByRetry: Attempt[];
  hung: number;
}

export function killLosses(
  run: Pick<CellsRun, "attempts" | "killAt" | "endAt">,
  index: Map<string, HapRequest[]>,
  ringOf: (id: string) => string | undefined,
): KillLosses {
  const { killAt, endAt } = run;
  const failed = run.attempts.filter(isFailed);
  const spansKill = (x: Attempt) => x.startMs < killAt && (x.endMs ?? endAt) >= killAt;
  // A request sent before the kill, served by the victim, that failed: in flight there.
  const inFlightAtKill = (x: Attempt) => spansKill(x) && logOf(x, index)?.server === VICTIM_NAME;
  const wereInFlight = run.attempts.filter(spansKill);
  const onVictim = wereInFlight.filter((x) => ringOf(x.programId) === VICTIM_NAME);
  const savedByRetry = onVictim.filter((x) => {
    const r = logOf(x, index);
    return x.outcome === "ok" && r !== null && r.server !== VICTIM_NAME && r.retries > 0;
  });
  return {
    failed,
    lostAtKill: failed.filter(inFlightAtKill),
    lostElse: failed.filter((x) => !inFlightAtKill(x)),
    wereInFlight,
    onVictim,
    savedByRetry,
    hung: failed.filter((x) => x.outcome === "hung").length,
  };
}

/**
 * Of the programs answered in `before` (by HAProxy's log), how many the ring probe puts on the
 * cell that answered their first request there.
 */
export function ringAgreement(
  index: Map<string, HapRequest[]>,
  before: Span,
  ringOf: (id: string) => string | undefined,
): { agree: number; seen: number } {
  let agree = 0;
  let seen = 0;
  for (const [p, reqs] of index) {
    const r = reqs.find((x) => answered(x) && within(x, before));
    if (r === undefined) continue;
    seen++;
    if (ringOf(p) === r.server) agree++;
  }
  return { agree, seen };
}
