/**
 * `maitred config check FILE`: reads a `maitred serve --config` file as serve would and lists
 * every problem, one line each naming the field; exit 0 when there is none, 2 otherwise.
 * `maitred config schema`: the file's JSON Schema, for editors.
 */
import { type Command, CommanderError } from "commander";
import { checkConfigFile, configJsonSchema } from "../config/load-config.ts";
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
  config
    .command("schema")
    .description(
      "Print the JSON Schema of `maitred serve --config` files, for editors' completion and checks (e.g. yaml-language-server: `# yaml-language-server: $schema=maitred.schema.json`)",
    )
    .action(() => {
      io.stdout(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    });
}
