/**
 * `maitred sim-backend`: a simulated vLLM/SGLang server. Flags
 * arrive as strings and are validated by the sim-server options schema, so a bad value is a
 * ConfigError naming the flag (exit 2).
 */

import { type Command, Option } from "commander";
import { TIMING_PROFILES } from "../engine/timing.ts";
import { ConfigError } from "../errors.ts";
import { SIM_BACKEND_DEFAULTS } from "../sim-server/options.ts";
import { startSimBackend } from "../sim-server/start-sim-backend.ts";
import { createLogger, LOG_LEVELS, type LogLevel } from "../util/logger.ts";
import type { CliIo } from "./cli-io.ts";

interface SimBackendFlags {
  host: string;
  port: string;
  model?: string;
  numGpuBlocks?: string;
  blockSize: string;
  maxNumSeqs: string;
  maxNumBatchedTokens: string;
  maxModelLen?: string;
  profile: string;
  timeScale: string;
  seed: string;
  personality: string;
  enablePromptTokensDetails: boolean;
  enablePrefixCaching: boolean;
  failureRate: string;
  failureCodes: string;
  streamErrorAfter?: string;
  toolCallShare: string;
  logLevel: string;
}

export function registerSimBackend(program: Command, io: CliIo): void {
  const d = SIM_BACKEND_DEFAULTS;
  const profiles = Object.keys(TIMING_PROFILES).join(", ");
  program
    .command("sim-backend")
    .description(
      "Simulated vLLM/SGLang backend: OpenAI API, SSE streaming and Prometheus /metrics over a paged-KV engine with prefix caching, batching and preemption (no GPU)",
    )
    .addOption(new Option("--host <host>", "address to listen on").default(d.host))
    .addOption(
      new Option("--port <port>", "port to listen on (0 = any free port)").default(String(d.port)),
    )
    .addOption(new Option("--model <name>", "served model name (default: the profile's model)"))
    .addOption(
      new Option(
        "--num-gpu-blocks <n>",
        "KV-cache blocks, block 0 reserved (default: the profile's capacity)",
      ),
    )
    .addOption(
      new Option("--block-size <n>", "tokens per KV block: 1, 8, 16, 32, 64 or 128").default(
        String(d.blockSize),
      ),
    )
    .addOption(
      new Option("--max-num-seqs <n>", "most requests running at once").default(
        String(d.maxNumSeqs),
      ),
    )
    .addOption(
      new Option("--max-num-batched-tokens <n>", "token budget of one engine step").default(
        String(d.maxNumBatchedTokens),
      ),
    )
    .addOption(
      new Option("--max-model-len <n>", "context length in tokens (default: the profile's)"),
    )
    .addOption(new Option("--profile <name>", `timing profile: ${profiles}`).default(d.profile))
    .addOption(
      new Option("--time-scale <S>", "run the engine S times faster than real time").default(
        String(d.timeScale),
      ),
    )
    .addOption(
      new Option("--seed <n>", "seeds output lengths, tokens and injected failures").default(
        String(d.seed),
      ),
    )
    .addOption(
      new Option("--personality <name>", "metrics and info endpoints to imitate")
        .choices(["vllm", "sglang"])
        .default(d.personality),
    )
    .addOption(
      new Option(
        "--enable-prompt-tokens-details",
        "report usage.prompt_tokens_details.cached_tokens",
      ).default(false),
    )
    .addOption(new Option("--no-enable-prefix-caching", "disable the prefix cache"))
    .addOption(
      new Option(
        "--failure-rate <p>",
        "probability (0..1) that a request fails before it starts",
      ).default(String(d.failureRate)),
    )
    .addOption(
      new Option(
        "--failure-codes <list>",
        "comma-separated HTTP statuses for --failure-rate",
      ).default(d.failureCodes.join(",")),
    )
    .addOption(
      new Option(
        "--stream-error-after <n>",
        "fail every request with a mid-stream error after n tokens (default: off; per request: header x-sim-stream-error-after)",
      ),
    )
    .addOption(
      new Option(
        "--tool-call-share <p>",
        "share (0..1) of requests with tools and tool_choice auto that answer with a tool call",
      ).default(String(d.toolCallShare)),
    )
    .addOption(new Option("--log-level <level>", "log level").choices(LOG_LEVELS).default("info"))
    .addHelpText(
      "after",
      "\nPer-request headers: x-sim-return-error: <status> fails the request with that status;\nx-sim-stream-error-after: <n> sends an error event after n tokens, then [DONE].",
    )
    .action(async (flags: SimBackendFlags) => {
      const logger = createLogger({
        level: flags.logLevel as LogLevel,
        write: (line) => io.stderr(`${line}\n`),
        pretty: io.stderrIsTTY,
      });
      const backend = await startSimBackend({
        host: flags.host,
        port: flags.port,
        model: flags.model,
        numGpuBlocks: flags.numGpuBlocks,
        blockSize: flags.blockSize,
        maxNumSeqs: flags.maxNumSeqs,
        maxNumBatchedTokens: flags.maxNumBatchedTokens,
        maxModelLen: flags.maxModelLen,
        profile: flags.profile,
        timeScale: flags.timeScale,
        seed: flags.seed,
        personality: flags.personality,
        enablePromptTokensDetails: flags.enablePromptTokensDetails,
        enablePrefixCaching: flags.enablePrefixCaching,
        failureRate: flags.failureRate,
        failureCodes: flags.failureCodes,
        streamErrorAfter: flags.streamErrorAfter,
        toolCallShare: flags.toolCallShare,
        logger,
      }).catch((err: unknown) => {
        // A port in use is a configuration problem, not a crash.
        if (err instanceof Error && "code" in err && err.code === "EADDRINUSE") {
          throw new ConfigError("port", `${flags.host}:${flags.port} is already in use`);
        }
        throw err;
      });
      // A second signal (a process group and a supervisor both sending one) changes nothing.
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        void backend.close();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
}
