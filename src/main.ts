#!/usr/bin/env node
/**
 * The `maitred` executable. Subcommands live in `src/cli/`; each builds its own composition
 * root from validated options, so nothing happens at import time.
 */
import { runCli } from "./cli/run-cli.ts";

process.exitCode = await runCli(process.argv.slice(2));
