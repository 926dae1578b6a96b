import { isPlaceable, markForPause, usedTokens } from "./ledger.ts";
import type { PauseVictims } from "./pause-victims.ts";
import { pauseProgram } from "./program-moves.ts";
import type { BackendBook, SchedulerState } from "./scheduler-state.ts";

/**
 * Overflow still to be freed on `b`, counting what marked programs will free when their turn
 * ends (tokens + headroom each). Positive = action needed.
 */
export function projectedOverflow(state: SchedulerState, b: BackendBook): number {
  if (b.capacity === null) return 0;
  const used = usedTokens(b, state.config);
  return used - (b.markedTokens + b.markedHeadroom) - b.capacity;
}

/**
 * The pause half of the tick (seed 004 `_pause_until_safe`), for every healthy backend with a
 * known capacity that is over it: victims come from the swappable `pauseVictims` policy.
 */
export function pauseOverCapacity(state: SchedulerState): void {
  for (const b of state.backends) {
    if (!isPlaceable(b)) continue;
    const overflow = projectedOverflow(state, b);
    if (overflow > 0) freeRoom(state, b, overflow, "over capacity");
  }
}

/**
 * Free `tokens` on `b` as the pause step does: the victim policy's ACTING programs are paused
 * now, its REASONING ones marked (paused when their turn ends). Also used by the resume pass
 * to make room for an aged program (resume.ts case 2).
 */
export function freeRoom(state: SchedulerState, b: BackendBook, tokens: number, why: string) {
  applyVictims(
    state,
    b,
    state.policies.pauseVictims({
      programs: b.programs,
      overflow: tokens,
      actingTokenWeight: state.config.actingTokenWeight,
      bufferPerProgram: state.config.bufferPerProgram,
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
