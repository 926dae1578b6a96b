/**
 * Prints the flag tables of README.md from the commander tree itself, so the docs cannot drift
 * from the code: `node scripts/readme-flags.ts serve` (or sim-backend, bench, "bench compare",
 * simulate). test/readme.test.ts checks README lists every flag this prints.
 */
import { flagRows } from "../src/cli/flag-rows.ts";

const path = process.argv.slice(2).join(" ") || "serve";
const rows = flagRows(path);
const lines = ["| flag | meaning |", "| --- | --- |"];
for (const r of rows) lines.push(`| \`${r.flags}\` | ${r.help.replaceAll("|", "\\|")} |`);
process.stdout.write(`${lines.join("\n")}\n`);
