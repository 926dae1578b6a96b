/**
 * `maitred serve`: the router. Flags are generated from its settings
 * (src/config/router-config.ts) with ThunderAgent's names and defaults; each has a `MAITRED_*`
 * twin and a key in the `--config` YAML file; flags win. SIGTERM/SIGINT drain it (new programs
 * refused while its own go on, `--drain`), then stop it gracefully. It starts the router through
 * the package's entry (src/index.ts), as a program that embeds maitred does.
 */
import type { Command } from "commander";
import { resolveRouterConfig } from "../config/load-config.ts";
import { ROUTER_SETTINGS } from "../config/router-config.ts";
import { addSettingOptions, givenFlags } from "../config/setting.ts";
import { describeBounds } from "../config/tail-preset.ts";
import type { RouterHandle } from "../index.ts";
import { batchedLines, createLogger } from "../util/logger.ts";
import type { CliIo } from "./cli-io.ts";
import { readyBanner } from "./serve-banner.ts";

export function registerServe(program: Command, io: CliIo): void {
  const cmd = program
    .command("serve")
    .description("Run the program-aware router in front of vLLM/SGLang backends")
    .option(
      "--config <file>",
      "YAML file with any of these settings (flags win; env MAITRED_CONFIG)",
    );
  addSettingOptions(cmd, ROUTER_SETTINGS, { env: true });
  cmd.action(async (opts: Record<string, unknown>) => {
    const flags = { config: opts.config, ...givenFlags(ROUTER_SETTINGS, opts) };
    const config = resolveRouterConfig({ flags, env: io.env });
    // One write per turn of the event loop, however many requests ended in it (access log).
    // Bounded: a stderr nobody reads holds at most MAX_LOG_BUFFERED_BYTES of it.
    const sink = batchedLines((text) => io.stderr(text), { buffered: io.stderrBuffered });
    process.on("exit", sink.flush);
    const logger = createLogger({
      level: config.logLevel,
      fields: { cell: config.cell },
      write: sink.line,
      pretty: io.stderrIsTTY,
    });
    // Signals are heard from the start: a SIGTERM while the first tick waits for slow backends
    // stops the start-up instead of being lost or killing the process mid-way.
    const starting = new AbortController();
    let router: RouterHandle | null = null;
    let stopped = () => {};
    const done = new Promise<void>((resolve) => (stopped = resolve));
    // A second signal (a process group and a supervisor both sending one) changes nothing.
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      io.stderr(`maitred: ${signal} received, ${router ? "draining" : "stopping start-up"}\n`);
      if (router) router.drain().then(stopped, stopped);
      else starting.abort(new Error(`${signal} during start-up`));
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
    try {
      // The process is the router's: its RSS, heap and event-loop delay are the router's too.
      // Loaded here, not with the command tree: `maitred --help` and `--version` need none of it.
      const { startRouter } = await import("../index.ts");
      router = await startRouter(config, {
        logger,
        signal: starting.signal,
        processMetrics: true,
        logBuffer: sink,
      });
    } catch (err) {
      if (starting.signal.aborted) return;
      throw err;
    }
    // A shadow tr holds nothing: the router routes as default.
    const bounds = config.router === "tr" && !config.shadow ? describeBounds(config) : null;
    io.stdout(await readyBanner(router.url, bounds));
    await done;
  });
}
