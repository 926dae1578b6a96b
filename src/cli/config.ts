/**
 * `maitred config check FILE`: reads a `maitred serve --config` file as serve would and lists
 * every problem, one line each naming the field; exit 0 when there is none, 2 otherwise.
 */
import { type Command, CommanderError } from "commander";
import { checkConfigFile } from "../config/load-config.ts";
import type { CliIo } from "./cli-io.ts";

/** Exit code of a file with problems (as a bad flag). */
const EXIT_INVALID = 2;

export function registerConfig(program: Command, io: CliIo): void {
  const config = program.command("config").description("Work with `maitred serve --config` files");
  config
    .command("check")
    .description(
      "Check a config file as `maitred serve --config FILE` reads it, naming every bad field",
    )
    .argument("<file>", "the YAML file")
    .action((file: string) => {
      const errors = checkConfigFile(file);
      if (errors.length === 0) {
        io.stdout(`${file}: valid\n`);
        return;
      }
      for (const err of errors) io.stderr(`${file}: ${err.message}\n`);
      io.stderr(`${file}: ${errors.length} problem${errors.length === 1 ? "" : "s"}\n`);
      // Said above: the runner only turns it into the exit code.
      throw new CommanderError(EXIT_INVALID, "maitred.config.invalid", "");
    });
}
