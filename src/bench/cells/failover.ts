/**
 * How long the killed cell's programs took to be answered on another cell, in `npm run
 * bench:cells`: for each program the hash gives the victim that had run there before the kill,
 * its requests from the kill to the restart, and whether one was answered elsewhere (and how
 * soon), was lost, or none was sent; against the bound of one health-check interval plus one
 * step.
 */
import { CHECK_INTERVAL_MS } from "../../cells/haproxy-config.ts";
import { median } from "../percentile.ts";
import type { Attempt } from "../trace-client.ts";
import { answered, logOf, type Span } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import type { HapRequest } from "./haproxy-log.ts";
import { VICTIM_NAME } from "./stack-shape.ts";
import { stepsIn } from "./windows.ts";

export interface Failover {
  /** The victim's programs at the kill: the hash's, sent there before it. */
  victims: number;
  fate: { elsewhere: number; lost: number; quiet: number; other: number };
  /** Per program answered elsewhere, ms: kill → HAProxy sent it on; kill → answered; */
  toSent: number[];
  toAnswer: number[];
  /** its first request after the kill (or the kill) → answered; the new cell's hold. */
  fromAttempt: number[];
  heldThere: number[];
  /** The median step while stable, and the bound: one check interval plus that step. */
  stepMs: number;
  bound: number;
}

export function failover(
  run: Pick<CellsRun, "attempts" | "killAt" | "restartAt" | "endAt" | "records" | "t0">,
  stable: Span,
  index: Map<string, HapRequest[]>,
  ringOf: (id: string) => string | undefined,
): Failover {
  const { killAt, restartAt, endAt } = run;
  const stepMs = median(stepsIn(run.records, run.t0, stable).map((s) => s.endMs - s.startMs));
  const attemptsOf = new Map<string, Attempt[]>();
  for (const x of run.attempts) {
    const l = attemptsOf.get(x.programId) ?? [];
    attemptsOf.set(x.programId, l);
    l.push(x);
  }
  const out: Failover = {
    victims: 0,
    fate: { elsewhere: 0, lost: 0, quiet: 0, other: 0 },
    toSent: [],
    toAnswer: [],
    fromAttempt: [],
    heldThere: [],
    stepMs,
    bound: CHECK_INTERVAL_MS + stepMs,
  };
  for (const [program, atts] of attemptsOf) {
    if (ringOf(program) !== VICTIM_NAME || !atts.some((x) => x.startMs < killAt)) continue;
    // Its requests from the kill to the restart; one the victim answered in full had ended
    // before the kill, though the driver saw its end a moment after.
    const after = atts.filter((x) => {
      const r = logOf(x, index);
      const doneBefore = r !== null && r.server === VICTIM_NAME && answered(r);
      return (x.endMs ?? endAt) >= killAt && x.startMs < restartAt && !doneBefore;
    });
    out.victims++;
    if (after.length === 0) {
      out.fate.quiet++;
      continue;
    }
    const success = after.find((x) => {
      const r = logOf(x, index);
      return x.outcome === "ok" && r !== null && r.server !== VICTIM_NAME;
    });
    if (success === undefined) {
      if (after.some((x) => x.outcome === "failed" || x.outcome === "hung")) out.fate.lost++;
      else out.fate.other++;
      continue;
    }
    out.fate.elsewhere++;
    const r = logOf(success, index) as HapRequest;
    const end = success.endMs as number;
    out.toSent.push(Math.max(0, r.sentMs - killAt));
    out.toAnswer.push(end - killAt);
    out.fromAttempt.push(end - Math.max(killAt, after[0].startMs));
    out.heldThere.push(success.pausedMs ?? 0);
  }
  return out;
}
