/**
 * maitred tr at each --tail preset against the original ThunderAgent and the engine alone, live:
 * each router its own process before two simulated backends of its own, per host tier, repeated
 * with the order rotated; a table per tier on stdout with every race and the ratios' spread. The
 * races and the report are src/bench/race/.
 *
 *   npm run bench:race -- --thunderagent <gitdir> [--presets bounded,throughput] [--sizes 0,200]
 *     [--repeats 2] [--no-engine-alone] [--json out.json] [--svg chart.svg]
 *   npm run bench:race -- --from-json out.json [--svg chart.svg]
 */
import { RACE_SPEC, race } from "../src/bench/race/race.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { benchEntry } from "../src/bench/sim-runs.ts";

const args = scriptArgs(RACE_SPEC);
await benchEntry(
  RACE_SPEC.name,
  undefined,
  async () => null,
  async () => {
    await race(args, { note: progress, print: (text) => process.stdout.write(text) });
  },
);
