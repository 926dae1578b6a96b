import { isPlaceable, markForPause } from "./ledger.ts";
import { pauseProgram } from "./program-moves.ts";
import type { BackendBook, PauseVictims, ProgramRecord } from "./records.ts";
import { projectedOverflow } from "./room.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * The pause half of the tick (ThunderAgent's `_pause_until_safe`), for every healthy backend
 * with a known capacity whose room (room.ts: the books corrected by the engine's truth) is short of
 * what marked programs will free: victims come from the swappable `pauseVictims` policy.
 */
export function pauseOverCapacity(state: SchedulerState): void {
  for (const b of state.backends) {
    if (!isPlaceable(b)) continue;
    const overflow = projectedOverflow(state, b);
    if (overflow > 0) makeRoom(state, b, overflow, null, "over capacity");
  }
}

/**
 * Free `tokens` on `b` as the pause step does: the victim policy's ACTING programs are paused
 * now, its REASONING ones marked (paused when their turn ends). `eligible` narrows the
 * candidates (a program may only displace its own class and lower ones); null = all.
 */
export function makeRoom(
  state: SchedulerState,
  b: BackendBook,
  tokens: number,
  eligible: ((p: ProgramRecord) => boolean) | null,
  why: string,
  keepOne = true,
): void {
  const programs = eligible === null ? b.programs : [...b.programs].filter(eligible);
  applyVictims(
    state,
    b,
    state.policies.pauseVictims({
      programs,
      overflow: tokens,
      actingTokenWeight: state.config.actingTokenWeight,
      bufferPerProgram: state.config.bufferPerProgram,
      keepOne,
    }),
    why,
  );
}

/** Carries out a victim choice on `b`: ACTING victims paused now, REASONING ones marked. */
export function applyVictims(
  state: SchedulerState,
  b: BackendBook,
  victims: PauseVictims,
  why: string,
): void {
  for (const p of victims.pause) pauseProgram(state, p, why);
  for (const p of victims.mark) {
    markForPause(p);
    state.counters.marks++;
    state.effects.log("debug", "program marked for pause", {
      programId: p.id,
      backend: b.id,
      tokens: p.tokens,
      why,
    });
  }
}
