#!/usr/bin/env node
/**
 * The `maitred` executable. Subcommands live in `src/cli/`; each builds its own composition
 * root from validated options, so nothing happens at import time.
 */
import { CommanderError } from "commander";
import { buildProgram } from "./cli/program.ts";
import { ConfigError } from "./errors.ts";

/** Exit code for bad configuration or usage ("exit code 2"). */
const EXIT_USAGE = 2;

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed its message (or the help text).
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`maitred: invalid configuration: ${err.message}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    throw err;
  }
}

await main(process.argv);
