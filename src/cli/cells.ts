/**
 * `maitred cells haproxy-config`: prints the HAProxy configuration that puts several maitred
 * cells behind one address, each program always on its own cell (src/cells/haproxy-config.ts).
 */
import type { Command } from "commander";
import {
  DEFAULT_BIND,
  DEFAULT_BODY_BUFFER_BYTES,
  DEFAULT_STATS_BIND,
  haproxyConfig,
  MIN_BODY_BUFFER_BYTES,
  parseBind,
  parseCells,
} from "../cells/haproxy-config.ts";
import { IDENTITY_SOURCES, identityOrderSchema } from "../config/identity-sources.ts";
import { byteSize } from "../config/values.ts";
import { ConfigError } from "../errors.ts";
import type { CliIo } from "./cli-io.ts";

export function registerCells(program: Command, io: CliIo): void {
  const cells = program
    .command("cells")
    .description("Run several maitred cells (routers) behind one load balancer");
  cells
    .command("haproxy-config")
    .description(
      "Print an HAProxy 2.6+ configuration that sends every request of a program to one cell (consistent hash of its program id, read in maitred's order), checks each cell's /health, and spreads requests without a program id by least connections",
    )
    .requiredOption("--cells <list>", "the cells, NAME=URL,... (e.g. a=http://10.0.0.1:8300)")
    .option("--bind <addr:port>", "where HAProxy listens for clients", DEFAULT_BIND)
    .option(
      "--stats-bind <addr:port>",
      "where HAProxy serves its own Prometheus /metrics",
      DEFAULT_STATS_BIND,
    )
    .option(
      "--body-buffer <bytes>",
      "HAProxy's buffer (tune.bufsize): the largest request body whose program id it reads; a larger one keeps its cell only by a header identity (16k–16MiB, e.g. 16KiB when clients send x-program-id)",
      String(DEFAULT_BODY_BUFFER_BYTES),
    )
    .option(
      "--identity-order <sources>",
      `program id sources, first match wins, as the cells' own --identity-order (${IDENTITY_SOURCES.join(",")})`,
      IDENTITY_SOURCES.join(","),
    )
    .action((opts: Record<string, string>) => {
      const order = identityOrderSchema.safeParse(opts.identityOrder);
      if (!order.success) {
        throw new ConfigError(
          "--identity-order",
          order.error.issues.map((i) => i.message).join("; "),
        );
      }
      const buffer = byteSize().safeParse(opts.bodyBuffer);
      if (
        !buffer.success ||
        buffer.data < MIN_BODY_BUFFER_BYTES ||
        buffer.data > 16 * 1024 * 1024
      ) {
        throw new ConfigError(
          "--body-buffer",
          `must be a size between 16k and 16MiB, got ${JSON.stringify(opts.bodyBuffer)}`,
        );
      }
      io.stdout(
        haproxyConfig({
          bodyBufferBytes: buffer.data,
          cells: parseCells(opts.cells),
          bind: parseBind(opts.bind, "--bind"),
          statsBind: parseBind(opts.statsBind, "--stats-bind"),
          identityOrder: order.data,
        }),
      );
    });
}
