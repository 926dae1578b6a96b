/**
 * The flags of an entry script (scripts/*.ts), declared once as a table: node:util's parseArgs
 * reads them, the same table writes `--help`, and every mistake (an unknown flag, a missing
 * value, a value its check refuses) becomes one `ScriptArgsError` whose message names the flag.
 * Nothing here prints or exits: script-entry.ts does, so this stays testable.
 *
 * Values stay the text parseArgs read (a script passes many of them on to `maitred` commands
 * as written); a flag's `check`, a zod schema from src/config/values.ts, refuses bad text
 * before any work starts, and what it yields is there too, typed, in `parsed`.
 */
import { parseArgs } from "node:util";
import type { z } from "zod";

export interface ScriptFlag {
  /** A switch (false unless given) or a flag with a value; a value unless said. */
  type?: "string" | "boolean";
  /** Shown after the flag in `--help`: `<n>`, `<list>`, `<file>`. */
  arg?: string;
  /** Applied when the flag is not given. */
  default?: string;
  /** What `--help` says of the default where there is none to apply, or the text needs words. */
  defaultText?: string;
  description: string;
  /** The text must pass it; its output is `parsed[name]`. */
  check?: z.ZodType;
  /** Left out of `--help`: a flag the script passes to its own child processes. */
  hidden?: boolean;
}

/** An argument without a flag, required (the relays' upstream). */
export interface ScriptPositional {
  name: string;
  description: string;
}

export interface ScriptSpec<F extends Record<string, ScriptFlag> = Record<string, ScriptFlag>> {
  /** As `npm run` names the script (`bench:tr`); the prefix of every error line. */
  name: string;
  /** The usage line; `npm run <name> -- [flags]` unless given. */
  usage?: string;
  /** One line: what it measures or checks. */
  summary: string;
  /** How long the default run takes, and where that figure comes from. */
  runtime: string;
  flags: F;
  positionals?: readonly ScriptPositional[];
  /** Lines after the flags: what a flag's combination does, what the script needs installed. */
  notes?: readonly string[];
}

type FlagValue<F> = F extends { type: "boolean" }
  ? boolean
  : F extends { default: string }
    ? string
    : string | undefined;

type ParsedValue<F> = F extends { check: z.ZodType<infer T> }
  ? F extends { default: string }
    ? T
    : T | undefined
  : never;

type CheckedKeys<F> = { [K in keyof F]: F[K] extends { check: z.ZodType } ? K : never }[keyof F];

export interface ScriptArgs<F extends Record<string, ScriptFlag>> {
  /** Each flag as parseArgs read it: text, a switch's boolean, undefined when not given. */
  values: { [K in keyof F]: FlagValue<F[K]> };
  /** Each checked flag's value as its check yields it (from its default when not given). */
  parsed: { [K in CheckedKeys<F>]: ParsedValue<F[K]> };
  positionals: string[];
}

/** A mistake on the command line, said in one line that names the flag. */
export class ScriptArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScriptArgsError";
  }
}

const HELP = ["--help", "-h"];

/** Whether `argv` asks for help (before any `--`, after which everything is an argument). */
export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => HELP.includes(a));
}

/** The flag a parseArgs error message quotes (`'--seeds <value>'` → `--seeds`). */
const quotedFlag = (message: string) => /'(-[^' ]+)/.exec(message)?.[1] ?? "a flag";

/** parseArgs' errors (Node's ERR_PARSE_ARGS_*) as one line in maitred's words. */
function parseArgsProblem(err: Error & { code?: string }): string {
  const flag = quotedFlag(err.message);
  switch (err.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown flag ${flag}`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument ${/'([^']*)'/.exec(err.message)?.[1] ?? ""}`.trimEnd();
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (err.message.includes("does not take an argument")) return `${flag} takes no value`;
      // "ambiguous": the next argument starts with a dash (another flag, or -1).
      if (err.message.includes("ambiguous"))
        return `${flag} needs a value (one that starts with "-" is written ${flag}=VALUE)`;
      return `${flag} needs a value`;
    default:
      return err.message.split("\n")[0];
  }
}

/** What `check` makes of `raw`, or its first problem in the words the CLI uses for its flags. */
function checked(
  name: string,
  check: z.ZodType,
  raw: string,
): { ok: true; value: unknown } | { ok: false; problem: string } {
  const r = check.safeParse(raw);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  // A parser of its own grammar may already quote what it was given.
  const got = issue.message.includes(JSON.stringify(raw)) ? "" : `, got ${JSON.stringify(raw)}`;
  return { ok: false, problem: `--${name}: ${issue.message}${got}` };
}

/**
 * Reads `argv` by `spec`'s table: `{ help: true }` when it asks for help (whatever else it
 * holds), else the values. Throws `ScriptArgsError` on the first mistake.
 */
export function parseScriptArgs<const F extends Record<string, ScriptFlag>>(
  spec: ScriptSpec<F>,
  argv: readonly string[],
): { help: true } | ({ help: false } & ScriptArgs<F>) {
  if (wantsHelp(argv)) return { help: true };
  const options: Record<string, { type: "string" | "boolean"; default?: string | boolean }> = {};
  for (const [name, f] of Object.entries(spec.flags)) {
    const type = f.type ?? "string";
    const fallback = type === "boolean" ? false : f.default;
    options[name] = fallback === undefined ? { type } : { type, default: fallback };
  }
  const positionals = spec.positionals ?? [];
  let read: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    read = parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: positionals.length > 0,
    });
  } catch (err) {
    if (err instanceof TypeError && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"))
      throw new ScriptArgsError(parseArgsProblem(err));
    throw err;
  }
  if (read.positionals.length < positionals.length)
    throw new ScriptArgsError(`missing ${positionals[read.positionals.length].name}`);
  if (read.positionals.length > positionals.length)
    throw new ScriptArgsError(`unexpected argument ${read.positionals[positionals.length]}`);
  const parsed: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(spec.flags)) {
    const raw = read.values[name];
    if (f.check === undefined || typeof raw !== "string") continue;
    const r = checked(name, f.check, raw);
    if (r.ok) parsed[name] = r.value;
    // A default its own check refuses is the script's bug, not the user's mistake.
    else if (raw === f.default) throw new Error(`the default of --${name} fails: ${r.problem}`);
    else throw new ScriptArgsError(r.problem);
  }
  return {
    help: false,
    values: { ...read.values } as ScriptArgs<F>["values"],
    parsed: parsed as ScriptArgs<F>["parsed"],
    positionals: read.positionals,
  };
}

/** The line a mistake prints: `bench:tr: unknown flag --bogus; see --help`. */
export const scriptErrorLine = (spec: ScriptSpec, message: string) =>
  `${spec.name}: ${message}; see --help`;

const usageOf = (spec: ScriptSpec) => spec.usage ?? `npm run ${spec.name} -- [flags]`;

function defaultOf(f: ScriptFlag): string {
  if (f.defaultText !== undefined) return f.defaultText;
  if ((f.type ?? "string") === "boolean") return "off";
  return f.default === undefined ? "none" : f.default === "" ? '""' : f.default;
}

/** The widest flag column before descriptions go on their own line. */
const FLAG_COLUMN = 34;
/** Help lines break at word boundaries within this width, as commander's do. */
const WIDTH = 100;

/**
 * `text` in lines of at most WIDTH (a longer word alone on its line): `first`, then `indent`.
 * Text given as a list breaks only between its items (a flag's `(default: …)` stays whole).
 */
function wrap(text: string | readonly string[], indent: string, first = indent): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of typeof text === "string" ? text.split(" ") : text) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = indent;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** `--help`: usage, what it measures, how long it takes, each flag with its default. */
export function scriptHelp(spec: ScriptSpec): string {
  const args: [string, string[]][] = (spec.positionals ?? []).map((p) => [
    p.name,
    p.description.split(" "),
  ]);
  const flags: [string, string[]][] = [];
  for (const [name, f] of Object.entries(spec.flags)) {
    if (f.hidden) continue;
    const value = (f.type ?? "string") === "boolean" ? "" : ` ${f.arg ?? "<value>"}`;
    flags.push([`--${name}${value}`, [...f.description.split(" "), `(default: ${defaultOf(f)})`]]);
  }
  flags.push(["-h, --help", ["print", "this", "help"]]);
  const width = Math.min(FLAG_COLUMN, Math.max(...[...args, ...flags].map(([f]) => f.length)));
  const hanging = " ".repeat(width + 4);
  const row = ([flag, text]: [string, string[]]) =>
    flag.length <= width
      ? wrap(text, hanging, `  ${flag.padEnd(width)}  `)
      : [`  ${flag}`, ...wrap(text, hanging)];
  const lines = [
    `Usage: ${usageOf(spec)}`,
    "",
    ...wrap(spec.summary, ""),
    ...wrap(spec.runtime, "  ", "Default run: "),
  ];
  if (args.length > 0) lines.push("", "Arguments:", ...args.flatMap(row));
  lines.push("", "Flags:", ...flags.flatMap(row));
  for (const [i, note] of (spec.notes ?? []).entries())
    lines.push(...(i === 0 ? [""] : []), ...wrap(note, ""));
  return `${lines.join("\n")}\n`;
}
