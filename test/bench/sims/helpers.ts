import type { ScriptFlag, ScriptSpec } from "../../../src/bench/script-args.ts";
import { parseScriptArgs } from "../../../src/bench/script-args.ts";
import type { SimIo } from "../../../src/bench/sims/scorecard.ts";

/** A scorecard's flags read from `argv` as its script reads them. */
export function argsOf<const F extends Record<string, ScriptFlag>>(
  spec: ScriptSpec<F>,
  argv: string[],
) {
  const r = parseScriptArgs(spec, argv);
  if (r.help) throw new Error("asked for help");
  return r;
}

/**
 * A scorecard's io in this process: `result` makes each spec's result (the runs a test makes
 * up), and what it prints and notes is kept.
 */
export function testIo<S, R>(result: (spec: S) => R) {
  const printed: string[] = [];
  const noted: string[] = [];
  const ran: S[][] = [];
  const io: SimIo<S, R> = {
    print: (t) => {
      printed.push(t);
    },
    note: (t) => {
      noted.push(t);
    },
    run: async (specs) => {
      ran.push([...specs]);
      return specs.map(result);
    },
  };
  return { io, printed, noted, ran, stdout: () => printed.join("") };
}
