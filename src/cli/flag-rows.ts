import type { Command } from "commander";
import { buildProgram } from "./program.ts";

export interface FlagRow {
  /** e.g. `--port <port>` */
  flags: string;
  help: string;
}

/** The options of a subcommand path such as "serve" or "bench compare", help flag excluded. */
export function flagRows(path: string): FlagRow[] {
  let cmd: Command = buildProgram();
  for (const name of path.split(/\s+/).filter(Boolean)) {
    const next = cmd.commands.find((c) => c.name() === name);
    if (!next) throw new Error(`no command ${JSON.stringify(path)}`);
    cmd = next;
  }
  return cmd.options
    .filter((o) => o.long !== "--help")
    .map((o) => {
      const def =
        o.defaultValue === undefined ? "" : ` (default: ${JSON.stringify(o.defaultValue)})`;
      const choices = o.argChoices ? ` (choices: ${o.argChoices.join(", ")})` : "";
      return { flags: o.flags, help: `${o.description}${choices}${def}` };
    });
}

/** A markdown table of a command's flags. */
export function flagTable(path: string): string {
  const lines = ["| flag | meaning |", "| --- | --- |"];
  for (const r of flagRows(path)) {
    lines.push(`| \`${r.flags}\` | ${r.help.replaceAll("|", "\\|")} |`);
  }
  return lines.join("\n");
}

const MARKED = /<!-- flags:([a-z -]+) -->\n[\s\S]*?<!-- \/flags:\1 -->/g;

/** Rewrites every marked table of a document with the current flags. */
export function replaceFlagTables(doc: string): string {
  return doc.replace(
    MARKED,
    (_m, path: string) => `<!-- flags:${path} -->\n${flagTable(path)}\n<!-- /flags:${path} -->`,
  );
}
