/**
 * Every figure `npm run bench:cells` reads from its HAProxy pass, computed once from what the
 * pass measured (cells-run.ts), for the reports and the goals.
 */
import { type Affinity, affinity, byProgram, moves } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import { type Failover, failover } from "./failover.ts";
import type { HapRequest } from "./haproxy-log.ts";
import {
  failureKinds,
  type KillLosses,
  killLosses,
  type PhaseLosses,
  phaseLosses,
  ringAgreement,
} from "./losses.ts";
import { isChat, type RunWindows, runWindows, stepsPerMin } from "./windows.ts";

export interface CellsFigures {
  windows: RunWindows;
  ringOf: (id: string) => string | undefined;
  /** The closed loop's requests in HAProxy's log, and by program. */
  chat: HapRequest[];
  index: Map<string, HapRequest[]>;
  phases: PhaseLosses[];
  kinds: Map<string, number>;
  kill: KillLosses;
  /** The ring probe against the run's log (programs answered before the kill). */
  agreement: { agree: number; seen: number };
  affinity: { stable: Affinity; dead: Affinity; back: Affinity };
  /** Programs answered on both sides of the kill and of the restart, and those that moved. */
  atKill: ReturnType<typeof moves>;
  atBack: ReturnType<typeof moves>;
  failover: Failover;
  stableStepsPerMin: number;
}

export function cellsFigures(run: CellsRun): CellsFigures {
  const windows = runWindows(run);
  const { calm } = windows;
  const ringOf = (id: string) => run.ring.get(id);
  const chat = run.hapRequests.filter(isChat);
  const index = byProgram(chat);
  return {
    windows,
    ringOf,
    chat,
    index,
    phases: phaseLosses(run, windows.phases, chat),
    kinds: failureKinds(run.attempts, index),
    kill: killLosses(run, index, ringOf),
    agreement: ringAgreement(index, { from: run.t0, to: run.killAt }, ringOf),
    affinity: {
      stable: affinity(chat, calm.stable),
      dead: affinity(chat, calm.dead),
      back: affinity(chat, calm.back),
    },
    atKill: moves(chat, { from: run.t0, to: run.killAt }, calm.dead),
    atBack: moves(chat, calm.dead, calm.back),
    failover: failover(run, calm.stable, index, ringOf),
    stableStepsPerMin: stepsPerMin(run.records, run.t0, calm.stable),
  };
}
