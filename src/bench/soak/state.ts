/**
 * What a soak run keeps as it goes, shared by its sampler, its faults and its end: the samples,
 * the violations (each said on a line as it is found), the programs last seen, the programs the
 * probes and bursts started, the books' rounding residue.
 */
import type { Sample } from "./chart.ts";
import { bookDrift, type ProgramSample, type RouterSample, type Violation } from "./invariants.ts";

export interface SoakState {
  /** When load started (epoch ms): every printed moment is seconds since. */
  readonly t0: number;
  readonly samples: Sample[];
  readonly violations: Violation[];
  /** Every router's programs in the last sample (a held disconnect looks for a paused one). */
  lastPrograms: readonly ProgramSample[];
  /** Programs the probes and bursts started; the closed loop's are `loopPrograms()`. */
  programsSeen: number;
  loopPrograms: () => number;
  /** The largest rounding residue seen in the books (invariants.ts BOOK_DRIFT_TOKENS). */
  drift: number;
  /** The model the backends serve, once asked. */
  model: string;
  /** Where its lines go (stdout). */
  log: (line: string) => void;
}

export function createSoakState(t0: number, log: (line: string) => void): SoakState {
  return {
    t0,
    samples: [],
    violations: [],
    lastPrograms: [],
    programsSeen: 0,
    loopPrograms: () => 0,
    drift: 0,
    model: "",
    log,
  };
}

/** A moment as the soak prints it: seconds since load started, `12.5 s`. */
export const sinceText = (t0: number, ms: number) => `${((ms - t0) / 1000).toFixed(1)} s`;

/** Keep violations and say each on its line. */
export function violate(st: SoakState, vs: readonly Violation[]): void {
  for (const v of vs) {
    st.violations.push(v);
    st.log(`VIOLATION at ${sinceText(st.t0, v.atMs)} ${v.invariant}: ${v.detail}`);
  }
}

/** With cells, a violation says which cell. */
export const onRouter = (cells: number, name: string, vs: Violation[]): Violation[] =>
  cells > 0 ? vs.map((v) => ({ ...v, detail: `${name}: ${v.detail}` })) : vs;

/** Keep the sample's rounding residue if it is the largest yet. */
export function noteDrift(st: SoakState, s: RouterSample): void {
  const d = bookDrift(s);
  if (Math.abs(d) > Math.abs(st.drift)) st.drift = d;
}
