/**
 * `npm run readme:flags`: the docs' generated parts rewritten from the command tree, so they
 * cannot drift from the code: every flag table between `<!-- flags:COMMAND -->` markers and
 * every quoted `npx maitred …` output between `<!-- output -->` markers, in README.md and every
 * Markdown document under config/, scripts/, src/ and test/. The generators are src/cli's
 * (flag-rows.ts); the bench sits below the CLI, so the script hands them in as `DocParts`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const README_FLAGS_USAGE = `usage: npm run readme:flags [-- --slow] [-- --check]
       npm run readme:flags -- COMMAND...   (print one table, e.g. "bench compare")

Rewrites the flag tables (<!-- flags:COMMAND --> markers) and the quoted outputs of
npx maitred commands (<!-- output --> markers) in README.md and every Markdown document
under config/, scripts/, src/ and test/.
  --write   rewrite the documents (what npm run readme:flags passes)
  --slow    also rerun the outputs marked slow (each takes seconds)
  --check   write nothing: name each stale document and exit 1 if there is one
`;

/** What generates the docs' parts (src/cli/flag-rows.ts). */
export interface DocParts {
  /** Every Markdown document, as paths from `root`. */
  docFiles(root: string): string[];
  /** One command's flag table (`bench compare`). */
  flagTable(command: string): string;
  replaceFlagTables(doc: string): string;
  replaceOutputs(doc: string, options: { slow: boolean }): Promise<string>;
}

/** What the command line asks for. */
export type ReadmeFlagsRequest =
  | { kind: "help" }
  | { kind: "unknown"; flags: string[] }
  | { kind: "table"; command: string }
  | { kind: "refresh"; check: boolean; slow: boolean };

const KNOWN = ["--write", "--slow", "--check", "--help", "-h"];

export function readmeFlagsRequest(argv: readonly string[]): ReadmeFlagsRequest {
  const flags = new Set(argv.filter((a) => a.startsWith("-")));
  const words = argv.filter((a) => !a.startsWith("-"));
  const unknown = [...flags].filter((f) => !KNOWN.includes(f));
  if (flags.has("--help") || flags.has("-h")) return { kind: "help" };
  if (unknown.length > 0) return { kind: "unknown", flags: unknown };
  if (words.length > 0) return { kind: "table", command: words.join(" ") };
  return { kind: "refresh", check: flags.has("--check"), slow: flags.has("--slow") };
}

/** The documents whose generated parts are stale; rewritten unless `check`. */
export async function refreshDocs(
  root: string,
  o: { check: boolean; slow: boolean },
  parts: DocParts,
): Promise<string[]> {
  const stale: string[] = [];
  for (const file of parts.docFiles(root)) {
    const path = join(root, file);
    const doc = readFileSync(path, "utf8");
    const next = await parts.replaceOutputs(parts.replaceFlagTables(doc), { slow: o.slow });
    if (next === doc) continue;
    stale.push(file);
    if (!o.check) writeFileSync(path, next);
  }
  return stale;
}

/** What the command prints on stdout and stderr, and its exit code. */
export interface ReadmeFlagsOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export async function runReadmeFlags(
  argv: readonly string[],
  root: string,
  parts: DocParts,
): Promise<ReadmeFlagsOutcome> {
  const r = readmeFlagsRequest(argv);
  if (r.kind === "help") return { stdout: README_FLAGS_USAGE, stderr: "", exitCode: 0 };
  if (r.kind === "unknown") {
    const stderr = `readme-flags: unknown option ${r.flags.join(", ")}\n${README_FLAGS_USAGE}`;
    return { stdout: "", stderr, exitCode: 2 };
  }
  if (r.kind === "table")
    return { stdout: `${parts.flagTable(r.command)}\n`, stderr: "", exitCode: 0 };
  const stale = await refreshDocs(root, r, parts);
  const verb = r.check ? "stale" : "rewritten";
  const stdout =
    stale.length === 0 ? "every generated part is current\n" : `${verb}: ${stale.join(", ")}\n`;
  return { stdout, stderr: "", exitCode: r.check && stale.length > 0 ? 1 : 0 };
}
