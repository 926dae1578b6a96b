import { bookedHeadroom, bookedTokens } from "../ledger.ts";
import type { PauseVictimFn, PauseVictims, ProgramRecord } from "../records.ts";
import { CLASS_COUNT, classIndex } from "./priority-classes.ts";

/** `system` programs are never paused. */
const SYSTEM = classIndex("system");

const bySizeThenSeq = (a: ProgramRecord, b: ProgramRecord) => a.tokens - b.tokens || a.seq - b.seq;

/**
 * Priority-aware pause victims on one over-capacity backend. Cases, in order:
 *   1. classes from the lowest up: `bulk`, then `default`, then `interactive` only when nothing
 *      lower is left to pause or mark; `system` is never a victim;
 *   2. within a class the tr rules (pause-victims.ts): ACTING programs smallest first are
 *      paused, then unmarked REASONING programs smallest first are marked, each until the
 *      projected overflow is covered; each frees its tokens plus its own headroom;
 *   3. the backend keeps at least one active, unmarked program (an oversized program runs).
 */
export const classAwareVictims: PauseVictimFn = (input) => {
  const acting: ProgramRecord[][] = [];
  const reasoning: ProgramRecord[][] = [];
  for (let c = 0; c < CLASS_COUNT; c++) {
    acting.push([]);
    reasoning.push([]);
  }
  let unmarked = 0;
  for (const p of input.programs) {
    // A lent program books nothing: pausing it would free no room (lending.ts).
    if (p.markedForPause || p.lent) continue;
    unmarked++;
    (p.status === "ACTING" ? acting : reasoning)[p.cls].push(p);
  }
  const out: PauseVictims = { pause: [], mark: [] };
  let budget = unmarked - (input.keepOne === false ? 0 : 1); // case 3
  let overflow = input.overflow;
  for (let c = CLASS_COUNT - 1; c > SYSTEM; c--) {
    if (overflow <= 0 || budget <= 0) break;
    acting[c].sort(bySizeThenSeq);
    for (const p of acting[c]) {
      if (overflow <= 0 || budget <= 0) break;
      out.pause.push(p);
      overflow -= input.actingTokenWeight * bookedTokens(p) + bookedHeadroom(p);
      budget--;
    }
    reasoning[c].sort(bySizeThenSeq);
    for (const p of reasoning[c]) {
      if (overflow <= 0 || budget <= 0) break;
      out.mark.push(p);
      overflow -= p.tokens + p.headroom;
      budget--;
    }
  }
  return out;
};
