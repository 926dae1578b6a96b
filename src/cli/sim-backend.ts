/**
 * `maitred sim-backend`: a simulated vLLM/SGLang server. Its flags are the sim-server's
 * settings (src/sim-server/options.ts); a bad value is a ConfigError naming the flag (exit 2).
 */

import type { Command } from "commander";
import { LOG_LEVEL_SETTING } from "../config/router-config.ts";
import { addSettingOptions, givenFlags, parseSetting } from "../config/setting.ts";
import { ConfigError } from "../errors.ts";
import {
  type RawSimBackendOptions,
  resolveSimBackendOptions,
  SIM_SETTINGS,
} from "../sim-server/options.ts";
import { createLogger } from "../util/logger.ts";
import type { CliIo } from "./cli-io.ts";

export function registerSimBackend(program: Command, io: CliIo): void {
  const cmd = program
    .command("sim-backend")
    .description(
      "Simulated vLLM/SGLang backend: OpenAI API, SSE streaming and Prometheus /metrics over a paged-KV engine with prefix caching, batching and preemption (no GPU)",
    );
  addSettingOptions(cmd, [...SIM_SETTINGS, LOG_LEVEL_SETTING]);
  cmd
    .addHelpText(
      "after",
      `\nPer-request headers: x-sim-return-error: <status> fails the request with that status;\nx-sim-stream-error-after: <n> sends an error event after n tokens, then [DONE].\n\nRuntime control: POST /sim/metrics-fault {"mode":"garbage"|"error"|"slow"|"ok","seconds":N,\n"delay_seconds":D} makes /metrics answer garbage, a 500, or its body D s late (default 15)\nfor N real seconds (absent: until the next control; "ok" ends it). Open like the headers above:\nthis is a test server, listening on loopback unless --host says otherwise.\n\nPriority scheduling: --scheduling-policy priority, for either personality (SGLang's own flag is\n--enable-priority-scheduling), orders the engine by the integer \`priority\` field of\n/v1/chat/completions, /v1/completions and /v1/responses (/v1/messages has none): lower values\nfirst with vLLM's rules; higher first with SGLang's unless --schedule-low-priority-values-first,\nand a waiting request may then preempt running ones worse by more than the threshold.`,
    )
    .action(async (opts: Record<string, unknown>) => {
      const flags = givenFlags(SIM_SETTINGS, opts);
      const raw: RawSimBackendOptions = {};
      for (const s of SIM_SETTINGS) if (s.key in flags) raw[s.prop] = flags[s.key];
      // Read before anything starts, so a bad flag is an error and not a half-started server.
      const options = resolveSimBackendOptions(raw);
      const logLevel = parseSetting(
        LOG_LEVEL_SETTING,
        opts.logLevel ?? LOG_LEVEL_SETTING.default,
        "--log-level",
      );
      const logger = createLogger({
        level: logLevel,
        write: (line) => io.stderr(`${line}\n`),
        pretty: io.stderrIsTTY,
      });
      // Loaded here, not with the command tree: the other commands need none of it.
      const { startSimBackend } = await import("../sim-server/start-sim-backend.ts");
      const backend = await startSimBackend({ ...options, logger }).catch((err: unknown) => {
        // A port in use is a configuration problem, not a crash.
        if (err instanceof Error && "code" in err && err.code === "EADDRINUSE") {
          throw new ConfigError("port", `${options.host}:${options.port} is already in use`);
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
