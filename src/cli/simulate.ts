/**
 * `maitred simulate`: the router's scheduling core with simulated engines in virtual time
 * (src/simulate). The table goes to stdout, wall times to stderr (they never enter the JSON,
 * which is byte-identical for identical inputs); `--json` and `--svg` write files.
 */

import type { Command } from "commander";
import { addSettingOptions } from "../config/setting.ts";
import {
  resolveSimulateFlags,
  SIMULATE_SETTINGS,
  TR_KNOB_SETTINGS,
} from "../simulate/simulate-options.ts";
import type { CliIo } from "./cli-io.ts";

export function registerSimulate(program: Command, io: CliIo): void {
  const cmd = program
    .command("simulate")
    .description(
      "Run maitred's scheduling core with simulated vLLM engines in virtual time (no GPU, no sockets) and report steps/min, latency, pauses and engine truth per router and concurrency",
    );
  const { json, svg, html, ...run } = SIMULATE_SETTINGS;
  addSettingOptions(cmd, [...Object.values(run), ...TR_KNOB_SETTINGS, json, svg, html]);
  cmd.action(async (flags: Record<string, unknown>) => {
    const o = resolveSimulateFlags(flags);
    // Loaded here, not with the command tree: `maitred --help` needs none of the simulator.
    const { runSimulateCommand } = await import("./simulate-run.ts");
    await runSimulateCommand(o, io);
  });
}
