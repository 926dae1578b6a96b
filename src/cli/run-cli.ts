/**
 * Runs one `maitred` command line to its end and gives its exit code: what the executable
 * (src/main.ts) does with process.argv, and what tests do with an array and their own
 * output sinks (cli-io.ts).
 */
import { CommanderError } from "commander";
import { ConfigError } from "../errors.ts";
import { type CliIo, processIo } from "./cli-io.ts";
import { buildProgram } from "./program.ts";

/** Exit code for bad configuration or usage ("exit code 2"). */
export const EXIT_USAGE = 2;

/** `args` are the words after `maitred`, e.g. ["serve", "--port", "0"]. */
export async function runCli(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...args], { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed its message (or the help text).
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    if (err instanceof ConfigError) {
      io.stderr(`maitred: invalid configuration: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}
