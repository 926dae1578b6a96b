/**
 * The docs' generated parts come from the command tree itself, so they cannot drift from the
 * code (src/cli/flag-rows.ts): every flag table between `<!-- flags:COMMAND -->` markers and
 * every quoted `npx maitred …` output between `<!-- output -->` markers, in README.md and every
 * Markdown document under config/, scripts/, src/ and test/. test/readme.test.ts fails when one
 * is stale.
 *
 *   npm run readme:flags                      rewrite the tables and the quick outputs
 *   npm run readme:flags -- --slow            also rerun the outputs marked slow (seconds each)
 *   npm run readme:flags -- --check [--slow]  write nothing; list what is stale, exit 1 if any
 *   npm run readme:flags -- bench compare     print one command's table
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { docFiles, flagTable, replaceFlagTables, replaceOutputs } from "../src/cli/flag-rows.ts";

const USAGE = `usage: npm run readme:flags [-- --slow] [-- --check]
       npm run readme:flags -- COMMAND...   (print one table, e.g. "bench compare")

Rewrites the flag tables (<!-- flags:COMMAND --> markers) and the quoted outputs of
npx maitred commands (<!-- output --> markers) in README.md and every Markdown document
under config/, scripts/, src/ and test/.
  --write   rewrite the documents (what npm run readme:flags passes)
  --slow    also rerun the outputs marked slow (each takes seconds)
  --check   write nothing: name each stale document and exit 1 if there is one
`;

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith("-")));
const words = args.filter((a) => !a.startsWith("-"));
const unknown = [...flags].filter(
  (f) => !["--write", "--slow", "--check", "--help", "-h"].includes(f),
);

if (flags.has("--help") || flags.has("-h")) {
  process.stdout.write(USAGE);
} else if (unknown.length > 0) {
  process.stderr.write(`readme-flags: unknown option ${unknown.join(", ")}\n${USAGE}`);
  process.exitCode = 2;
} else if (words.length > 0) {
  process.stdout.write(`${flagTable(words.join(" "))}\n`);
} else {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const check = flags.has("--check");
  const stale: string[] = [];
  for (const file of docFiles(root)) {
    const path = `${root}${file}`;
    const doc = readFileSync(path, "utf8");
    const next = await replaceOutputs(replaceFlagTables(doc), { slow: flags.has("--slow") });
    if (next === doc) continue;
    stale.push(file);
    if (!check) writeFileSync(path, next);
  }
  const verb = check ? "stale" : "rewritten";
  process.stdout.write(
    stale.length === 0 ? "every generated part is current\n" : `${verb}: ${stale.join(", ")}\n`,
  );
  if (check && stale.length > 0) process.exitCode = 1;
}
