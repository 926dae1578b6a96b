/**
 * What the docs quote from the command tree, generated from it so they cannot drift: each
 * command's flag table (between `<!-- flags:COMMAND -->` and `<!-- /flags:COMMAND -->`) and the
 * output of deterministic `npx maitred …` commands (between `<!-- output -->` and
 * `<!-- /output -->`), run in this process as the executable would run them.
 * scripts/readme-flags.ts rewrites them; test/readme.test.ts fails when one is stale.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "./program.ts";
import { runCli } from "./run-cli.ts";

export interface FlagRow {
  /** e.g. `--port <port>` */
  flags: string;
  help: string;
}

let tree: Command | undefined;

/** The commands a subcommand path such as "bench compare" runs through, the root first. */
function commandPath(path: string): Command[] {
  // Read only, never parsed with: one tree serves every question.
  tree ??= buildProgram();
  const out: Command[] = [tree];
  for (const name of path.split(/\s+/).filter(Boolean)) {
    const next = out.at(-1)!.commands.find((c) => c.name() === name);
    if (!next) throw new Error(`no command ${JSON.stringify(path)}`);
    out.push(next);
  }
  return out;
}

/** The options of a subcommand path such as "serve" or "bench compare", help flag excluded. */
export function flagRows(path: string): FlagRow[] {
  return commandPath(path)
    .at(-1)!
    .options.filter((o) => o.long !== "--help")
    .map((o) => {
      const def =
        o.defaultValue === undefined ? "" : ` (default: ${JSON.stringify(o.defaultValue)})`;
      const choices = o.argChoices ? ` (choices: ${o.argChoices.join(", ")})` : "";
      return { flags: o.flags, help: `${o.description}${choices}${def}` };
    });
}

/** A flag as its table cell shows it: code, with `|` escaped so the row keeps its columns. */
export function flagCell(flags: string): string {
  return `\`${flags.replaceAll("|", "\\|")}\``;
}

/** A markdown table of a command's flags. */
export function flagTable(path: string): string {
  const lines = ["| flag | meaning |", "| --- | --- |"];
  for (const r of flagRows(path)) {
    lines.push(`| ${flagCell(r.flags)} | ${r.help.replaceAll("|", "\\|")} |`);
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

/**
 * The flags of a `maitred …` command line (the words after `maitred`) that its command does
 * not take: what a doc must never show. Subcommand words are read first; a command takes its
 * own options and its parents' (`bench compare` takes every `bench` flag).
 */
export function unknownFlags(words: readonly string[]): string[] {
  let path = "";
  let i = 0;
  for (; i < words.length; i++) {
    const next = `${path} ${words[i]}`.trim();
    try {
      commandPath(next);
      path = next;
    } catch {
      break;
    }
  }
  if (path === "" && i < words.length && !words[i].startsWith("-"))
    return [`no maitred command in "${words.join(" ")}"`];
  const known = new Set(["--help", "-h"]);
  if (path === "") for (const f of ["--version", "-V"]) known.add(f);
  for (const cmd of commandPath(path).slice(1))
    for (const o of cmd.options) for (const f of [o.long, o.short]) if (f) known.add(f);
  return words
    .slice(i)
    .filter((w) => /^--?[a-z]/.test(w))
    .map((w) => w.split("=")[0])
    .filter((f) => !known.has(f))
    .map((f) => `${f} (maitred ${path || "itself"})`);
}

/** Words of a command line as a POSIX shell splits them (quotes, backslash escapes). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unclosed ${c} in ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? "") + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/** One `$ …` line of a quoted session (with its `\` continuations) and what follows it. */
interface SessionStep {
  command: string[];
  /** The lines after the command: a file's text for `cat FILE`, the output otherwise. */
  body: string[];
}

function sessionSteps(lines: readonly string[]): SessionStep[] {
  const steps: SessionStep[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith("$ ")) {
      if (steps.length === 0) throw new Error(`quoted output starts without "$ ": ${lines[i]}`);
      steps.at(-1)!.body.push(lines[i]);
      continue;
    }
    const command = [lines[i]];
    while (command.at(-1)!.endsWith("\\") && i + 1 < lines.length) command.push(lines[++i]);
    steps.push({ command, body: [] });
  }
  return steps;
}

/** The words of a step's command, continuations joined. */
function stepWords(step: SessionStep): string[] {
  return shellWords(
    step.command
      .map((l) => l.replace(/\\$/, " "))
      .join(" ")
      .slice(2),
  );
}

/** A marked block: its options and the session it quotes. */
const OUTPUT = /<!-- output((?: [^>]*?)?) -->\n```text\n([\s\S]*?)\n```\n<!-- \/output -->/g;

interface OutputBlock {
  /** Takes seconds: rewritten on request (`--slow`), never by the tests. */
  slow: boolean;
  /** Only the output lines this matches are quoted, after a `…`. */
  keep: RegExp | undefined;
  steps: SessionStep[];
}

function parseOutputBlock(attrs: string, body: string): OutputBlock {
  const keep = /keep="([^"]+)"/.exec(attrs)?.[1];
  return {
    slow: /\bslow\b/.test(attrs),
    keep: keep === undefined ? undefined : new RegExp(keep),
    steps: sessionSteps(body.split("\n")),
  };
}

/**
 * Runs a block's session in a scratch folder: `cat FILE` writes its text there for the
 * commands after it, each `npx maitred …` runs in this process with no `MAITRED_*` variable,
 * and its stdout and stderr, in the order written, replace the quoted output.
 */
async function runSession(block: OutputBlock): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "maitred-doc-"));
  try {
    const files = new Set<string>();
    const lines: string[] = [];
    for (const step of block.steps) {
      const words = stepWords(step);
      lines.push(...step.command);
      if (words[0] === "cat" && words.length === 2) {
        writeFileSync(join(dir, words[1]), `${step.body.join("\n")}\n`);
        files.add(words[1]);
        lines.push(...step.body);
        continue;
      }
      if (words[0] !== "npx" || words[1] !== "maitred")
        throw new Error(`a quoted session runs only cat and npx maitred: ${step.command[0]}`);
      const written: string[] = [];
      const sink = (text: string) => {
        written.push(text);
      };
      const args = words.slice(2).map((w) => (files.has(w) ? join(dir, w) : w));
      await runCli(args, { stdout: sink, stderr: sink, env: {}, stderrIsTTY: false });
      let out = written.join("").replaceAll(`${dir}/`, "").split("\n");
      if (out.at(-1) === "") out.pop();
      if (block.keep) out = ["…", ...out.filter((l) => block.keep!.test(l))];
      lines.push(...out);
    }
    return lines;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reruns every quoted output of a document (`slow` ones only when asked) and puts it in. */
export async function replaceOutputs(doc: string, options: { slow: boolean }): Promise<string> {
  let out = "";
  let last = 0;
  for (const m of doc.matchAll(OUTPUT)) {
    const block = parseOutputBlock(m[1], m[2]);
    out += doc.slice(last, m.index);
    last = m.index + m[0].length;
    if (block.slow && !options.slow) {
      out += m[0];
      continue;
    }
    const lines = await runSession(block);
    out += `<!-- output${m[1]} -->\n\`\`\`text\n${lines.join("\n")}\n\`\`\`\n<!-- /output -->`;
  }
  return out + doc.slice(last);
}

/** Every Markdown document of the project, as paths from its root: README.md first. */
export function docFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = `${rel}/${e.name}`;
      if (e.isDirectory() && e.name !== "node_modules") walk(path);
      else if (e.isFile() && e.name.endsWith(".md")) found.push(path);
    }
  };
  for (const dir of ["config", "scripts", "src", "test"]) walk(dir);
  return ["README.md", ...found.sort()];
}
