import { Command } from "commander";
import { registerBench } from "./bench.ts";
import { registerCells } from "./cells.ts";
import { type CliIo, processIo } from "./cli-io.ts";
import { registerConfig } from "./config.ts";
import { registerServe } from "./serve.ts";
import { registerSimBackend } from "./sim-backend.ts";
import { registerSimulate } from "./simulate.ts";

/**
 * The whole command tree; run-cli.ts parses argv with it, tests parse arrays with it. Every
 * command writes and reads its environment through `io`.
 */
export function buildProgram(io: CliIo = processIo): Command {
  const program = new Command("maitred")
    .description(
      "Program-aware router for agent workloads on vLLM/SGLang: pauses agent programs at their tool boundary when a backend's KV cache is full and resumes them when they fit.",
    )
    .version("0.1.0")
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  registerServe(program, io);
  registerSimBackend(program, io);
  registerBench(program, io);
  registerSimulate(program, io);
  registerConfig(program, io);
  registerCells(program, io);
  return program;
}
