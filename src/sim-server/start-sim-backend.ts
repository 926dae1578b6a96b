/**
 * `startSimBackend`: one simulated vLLM/SGLang backend listening on a port, for the CLI, the
 * router's `--backends sim:N`, tests and benchmarks. Nothing starts at import time.
 */

import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { createEngine } from "../engine/engine.ts";
import { prioritySchedulingOf } from "../engine/queue-order.ts";
import { engineConfigFromProfile } from "../engine/timing.ts";
import type { Engine } from "../engine/types.ts";
import { type Clock, wallClock } from "../runtime/clock.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import { createEngineDriver, type EngineDriver } from "./engine-driver.ts";
import {
  type RawSimBackendOptions,
  resolveSimBackendOptions,
  type SimBackendOptions,
} from "./options.ts";
import { buildSimApp } from "./sim-app.ts";

export interface StartSimBackendOptions extends RawSimBackendOptions {
  logger?: Logger;
  /** The engine driver's time (default: the wall clock). */
  clock?: Clock;
  /** Wall clock (ms) for `created` fields. */
  wallNow?: () => number;
  /** Unix seconds stamped on every `_created` metric (default: start time). */
  startedAt?: number;
}

export interface SimBackend {
  /** Base URL without `/v1`, e.g. http://127.0.0.1:8000. */
  url: string;
  port: number;
  options: SimBackendOptions;
  engine: Engine;
  driver: EngineDriver;
  app: Hono;
  close(): Promise<void>;
}

/** The engine a backend runs: the profile's coefficients with the options' sizes. */
export function simEngine(options: SimBackendOptions): Engine {
  return createEngine(
    engineConfigFromProfile(options.profile, {
      modelName: options.model,
      blockSize: options.blockSize,
      numGpuBlocks: options.numGpuBlocks,
      maxNumSeqs: options.maxNumSeqs,
      maxNumBatchedTokens: options.maxNumBatchedTokens,
      maxModelLen: options.maxModelLen,
      enablePrefixCaching: options.enablePrefixCaching,
      seed: options.seed,
      kvOffloadingSize: options.kvOffloadingSize,
      priorityScheduling: prioritySchedulingOf(options),
    }),
  );
}

export async function startSimBackend(input: StartSimBackendOptions = {}): Promise<SimBackend> {
  const { logger = silentLogger, clock = wallClock, wallNow, startedAt, ...raw } = input;
  const options = resolveSimBackendOptions(raw);
  const engine = simEngine(options);
  const driver = createEngineDriver({ engine, clock, timeScale: options.timeScale });
  const app = buildSimApp({ options, driver, logger, wallNow, startedAt, clock });

  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () =>
      resolve(s),
    );
    s.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}`;
  logger.info("sim-backend listening", {
    url,
    model: options.model,
    personality: options.personality,
    profile: options.profile,
    numGpuBlocks: options.numGpuBlocks,
    kvOffloadingSize: options.kvOffloadingSize,
    timeScale: options.timeScale,
  });

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      driver.close();
      server.close(() => resolve());
      // Streams in flight would keep the server open forever.
      if ("closeAllConnections" in server) server.closeAllConnections();
    });
    return closing;
  };
  return { url, port, options, engine, driver, app, close };
}
