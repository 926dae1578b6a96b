import type { Command } from "commander";

export function registerSimBackend(program: Command): void {
  program.command("sim-backend").description("Simulated vLLM/SGLang backend (in progress)");
}
