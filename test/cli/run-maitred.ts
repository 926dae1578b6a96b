import { runCli } from "../../src/cli/run-cli.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `maitred <args>` run to its end in this process (src/cli/run-cli.ts, what src/main.ts
 * runs), its output captured: flag parsing, validation and the exit code without the cost of
 * starting another Node. `env` is added to the process's environment, as a child would see it.
 */
export async function runMaitred(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { ...process.env, ...env },
  });
  return { code, stdout, stderr };
}
