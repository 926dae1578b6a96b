/**
 * What a command reads and writes besides its files: its output streams and its environment.
 * `maitred` gives every command the process's own; tests give their own, so a command runs
 * in the test's process (parse, validate, run) and its output and exit code can be checked
 * without starting another Node.
 */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Bytes written to stderr that its reader has not taken yet (held in memory meanwhile). */
  stderrBuffered?(): number;
  /** Where `MAITRED_*` settings are read from. */
  env: NodeJS.ProcessEnv;
  /** stderr is a terminal: logs are drawn for a person instead of as JSON lines. */
  stderrIsTTY?: boolean;
}

export const processIo: CliIo = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  stderrBuffered: () => process.stderr.writableLength,
  env: process.env,
  stderrIsTTY: process.stderr.isTTY === true,
};
