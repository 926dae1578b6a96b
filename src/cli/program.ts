import { Command } from "commander";
import { registerBench } from "./bench.ts";
import { registerServe } from "./serve.ts";
import { registerSimBackend } from "./sim-backend.ts";
import { registerSimulate } from "./simulate.ts";

/** The whole command tree; `main.ts` parses argv with it, tests parse arrays with it. */
export function buildProgram(): Command {
  const program = new Command("maitred")
    .description(
      "Program-aware router for agent workloads on vLLM/SGLang: pauses agent programs at their tool boundary when a backend's KV cache is full and resumes them when they fit.",
    )
    .version("0.1.0")
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerServe(program);
  registerSimBackend(program);
  registerBench(program);
  registerSimulate(program);
  return program;
}
