import { bookedHeadroom, bookedTokens } from "./ledger.ts";
import type { PauseVictimFn, ProgramRecord } from "./records.ts";

/**
 * Victim selection on one over-capacity backend (ThunderAgent's pause order), as a pure function
 * so that priority-aware policies can replace it.
 */

const bySizeThenQueueOrder = (a: ProgramRecord, b: ProgramRecord) =>
  a.tokens - b.tokens || a.seq - b.seq;

/**
 * Cases, in order:
 *   1. ACTING programs, smallest first, are paused; each frees w·tokens + its headroom.
 *   2. Then unmarked REASONING programs, smallest first, are marked; each will free
 *      tokens + its headroom. Marking stops as soon as the projected overflow, counting what is
 *      already marked, is no longer positive (ThunderAgent re-tests an overflow that marks never
 *      lower, and so marks every reasoning program).
 *   3. The backend keeps at least one active, unmarked program: a lone program over capacity
 *      is oversized, and pausing it would only make it thrash its way back: an
 *      oversized program still runs.
 */
export const smallestFirstVictims: PauseVictimFn = (input) => {
  const acting: ProgramRecord[] = [];
  const reasoning: ProgramRecord[] = [];
  let unmarked = 0;
  for (const p of input.programs) {
    // A lent program books nothing: pausing it would free no room (lending.ts).
    if (p.markedForPause || p.lent) continue;
    unmarked++;
    (p.status === "ACTING" ? acting : reasoning).push(p);
  }
  let budget = unmarked - (input.keepOne === false ? 0 : 1); // case 3
  let overflow = input.overflow;
  const pause: ProgramRecord[] = [];
  const mark: ProgramRecord[] = [];
  if (overflow <= 0 || budget <= 0) return { pause, mark };
  acting.sort(bySizeThenQueueOrder);
  for (const p of acting) {
    if (overflow <= 0 || budget <= 0) break;
    pause.push(p); // case 1
    overflow -= input.actingTokenWeight * bookedTokens(p) + bookedHeadroom(p);
    budget--;
  }
  if (overflow > 0 && budget > 0) {
    reasoning.sort(bySizeThenQueueOrder);
    for (const p of reasoning) {
      if (overflow <= 0 || budget <= 0) break;
      mark.push(p); // case 2
      overflow -= p.tokens + p.headroom;
      budget--;
    }
  }
  return { pause, mark };
};
