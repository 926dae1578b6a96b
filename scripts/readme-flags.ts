/**
 * README.md's flag tables come from the commander tree itself, so the docs cannot drift from
 * the code. `node scripts/readme-flags.ts serve` prints one table; `--write` rewrites every
 * table between `<!-- flags:COMMAND -->` and `<!-- /flags:COMMAND -->` markers in README.md.
 * test/readme.test.ts fails when a table is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { flagTable, replaceFlagTables } from "../src/cli/flag-rows.ts";

const args = process.argv.slice(2);
if (args[0] === "--write") {
  const path = new URL("../README.md", import.meta.url);
  writeFileSync(path, replaceFlagTables(readFileSync(path, "utf8")));
  process.stdout.write("README.md flag tables rewritten\n");
} else {
  process.stdout.write(`${flagTable(args.join(" ") || "serve")}\n`);
}
