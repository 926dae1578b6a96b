/**
 * Where an entry script (scripts/*.ts) meets the process: `--help` printed on stdout (exit 0),
 * a mistake on the command line as one line on stderr (exit 2) instead of a stack trace, and
 * progress lines on stderr, which never carries the tables and JSON other tools read from
 * stdout. The reading itself is script-args.ts, which neither prints nor exits.
 */
import {
  parseScriptArgs,
  type ScriptArgs,
  ScriptArgsError,
  type ScriptFlag,
  type ScriptSpec,
  scriptErrorLine,
  scriptHelp,
} from "./script-args.ts";

/** A mistake in the flags that only the script can see (two flags together): said, exit 2. */
export function flagError(spec: ScriptSpec, message: string): never {
  process.stderr.write(`${scriptErrorLine(spec, message)}\n`);
  process.exit(2);
}

/** The script's flags from the command line; `--help` and mistakes end the process here. */
export function scriptArgs<const F extends Record<string, ScriptFlag>>(
  spec: ScriptSpec<F>,
  argv: readonly string[] = process.argv.slice(2),
): ScriptArgs<F> {
  try {
    const r = parseScriptArgs(spec, argv);
    if (!r.help) return r;
    process.stdout.write(scriptHelp(spec));
    process.exit(0);
  } catch (err) {
    if (err instanceof ScriptArgsError) flagError(spec, err.message);
    throw err;
  }
}

/** One line of progress on stderr, as the scorecards write theirs: `# run 3/12: …`. */
export const progress = (line: string) => {
  process.stderr.write(`# ${line}\n`);
};
