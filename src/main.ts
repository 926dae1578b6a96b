#!/usr/bin/env node
/**
 * The `maitred` executable (started by src/launch.mjs, or by Node 24 directly). Subcommands live
 * in `src/cli/`; each builds its own composition root from validated options, so nothing
 * happens at import time.
 */
import { runCli } from "./cli/run-cli.ts";

// `maitred … | head` closes the pipe early: the reader has what it wanted, so stop quietly.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2));
