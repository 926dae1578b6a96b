import { applyVictims } from "../pause-step.ts";
import type { BackendBook, SchedulerState } from "../scheduler-state.ts";
import { classAwareVictims } from "./class-victims.ts";
import type { ClassIndex } from "./priority-classes.ts";

/**
 * Room for a starved head that fits nowhere (priority-resume.ts step 1). Without it the head
 * waits until enough room frees by itself while, by strict order, nothing else is admitted:
 * at overload on the simulator that blocked every class behind a starved bulk program, so
 * interactive requests timed out (408) and the longest bulk wait ran far past its threshold
 * (src/core/priority/README.md "Evidence"). The rule, as tr's ageing makes room for an aged
 * program (resume.ts `admitAged`):
 *   1. victims come only from the head's class and the classes below it (a starved bulk
 *      program never pauses an interactive one), chosen by the class-aware pause policy:
 *      lowest class first, ACTING programs paused now, REASONING ones marked;
 *   2. enough is freed to cover what is missing beyond what already-marked programs will free;
 *   3. the caller seats the head at once: until the marked programs end their turn the backend
 *      may be over capacity by at most what they hold, which the engine's free blocks absorb
 *      (the bound "longest wait ≤ threshold + one tick" needs the seat now, issue 5 targets).
 */
export function makeRoomForStarved(
  state: SchedulerState,
  b: BackendBook,
  cls: ClassIndex,
  missing: number,
): void {
  const eligible = [];
  for (const p of b.programs) if (p.cls >= cls) eligible.push(p); // 1
  const victims = classAwareVictims({
    programs: eligible,
    overflow: missing, // 2
    actingTokenWeight: state.config.actingTokenWeight,
    bufferPerProgram: state.config.bufferPerProgram,
  });
  applyVictims(state, b, victims, "room for a starved program");
}
