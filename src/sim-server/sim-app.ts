/**
 * The simulated backend's Hono app: generation routes, the small endpoints, and the one
 * `onError` that maps everything thrown to the OpenAI envelope.
 */

import { randomUUID } from "node:crypto";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { Errors, envelopeBody, envelopeOfPath, MaitredError, toErrorResponse } from "../errors.ts";
import { type Clock, wallClock } from "../runtime/clock.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import { registerDialectRoutes } from "./dialect-routes.ts";
import type { EngineDriver } from "./engine-driver.ts";
import { createFailureInjector } from "./failure-injection.ts";
import { generationHandler } from "./generation-handler.ts";
import { registerInfoRoutes } from "./info-routes.ts";
import { createMetricsFault } from "./metrics-fault.ts";
import type { SimBackendOptions } from "./options.ts";
import { noopObserver, type RequestObserver } from "./request-observer.ts";
import { createSglangMetrics } from "./sglang-metrics.ts";
import { renderVllmMetrics } from "./vllm-metrics.ts";

/** Generous cap so a runaway client cannot exhaust memory; vLLM itself sets none. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MS_PER_S = 1000;

export interface SimAppDeps {
  options: SimBackendOptions;
  driver: EngineDriver;
  logger?: Logger;
  /** Wall clock (ms) for `created` fields; Date.now by default. */
  wallNow?: () => number;
  /** Unix seconds of server start, every metric's `_created`; now by default. */
  startedAt?: number;
  /** Random part of response ids when no X-Request-Id is sent. */
  newRequestId?: () => string;
  /** Times a `/metrics` fault (metrics-fault.ts); the wall clock by default. */
  clock?: Clock;
}

const randomHex = () => randomUUID().replaceAll("-", "");

export function buildSimApp(deps: SimAppDeps): Hono {
  const { options, driver } = deps;
  const logger = deps.logger ?? silentLogger;
  const clock = deps.clock ?? wallClock;
  const wallNow = deps.wallNow ?? Date.now;
  const startedAt = deps.startedAt ?? wallNow() / MS_PER_S;
  // Block 0 is the null block, so the pool holds numGpuBlocks − 1 blocks.
  const maxTotalNumTokens = (options.numGpuBlocks - 1) * options.blockSize;

  let seq = 0;
  let observer: RequestObserver = noopObserver;
  let renderMetrics: () => string;
  if (options.personality === "sglang") {
    const sglang = createSglangMetrics({ driver, modelName: options.model, maxTotalNumTokens });
    observer = sglang.observer;
    renderMetrics = sglang.render;
  } else {
    const info = {
      modelName: options.model,
      blockSize: options.blockSize,
      numGpuBlocks: options.numGpuBlocks,
      enablePrefixCaching: options.enablePrefixCaching,
      kvOffloadingSize: options.kvOffloadingSize,
      vllmMetrics: options.vllmMetrics,
      createdAt: startedAt,
    };
    renderMetrics = () => renderVllmMetrics(driver.engine.stats(), info);
  }

  const genDeps = {
    options,
    driver,
    observer,
    reportCachedTokens: options.enablePromptTokensDetails,
    failures: createFailureInjector({
      rate: options.failureRate,
      codes: options.failureCodes,
      streamErrorAfter: options.streamErrorAfter,
      seed: options.seed,
    }),
    wallNow,
    newRequestId: deps.newRequestId ?? randomHex,
    nextSeq: () => seq++,
  };

  const app = new Hono();
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw Errors.payloadTooLarge(MAX_BODY_BYTES);
      },
    }),
  );
  app.post("/v1/chat/completions", generationHandler("chat", genDeps));
  app.post("/v1/completions", generationHandler("completions", genDeps));
  registerDialectRoutes(app, genDeps);
  registerInfoRoutes(app, {
    options,
    startedAt,
    renderMetrics,
    metricsFault: createMetricsFault(clock),
    clock,
    maxTotalNumTokens,
    permissionId: `modelperm-${randomHex()}`,
  });
  // vLLM dev-mode / SGLang endpoint: benchmarks reset the prefix cache between runs.
  const resetPrefixCache = () => {
    driver.engine.resetPrefixCache?.();
    return new Response(null, { status: 200 });
  };
  app.post("/reset_prefix_cache", resetPrefixCache);
  app.post("/flush_cache", resetPrefixCache);

  const respond = (c: Context, err: unknown) => {
    // vLLM answers the Messages API's errors in Anthropic's envelope.
    const res = toErrorResponse(err, "status");
    const body = envelopeBody(res, envelopeOfPath(c.req.path));
    return c.json(body, res.status as ContentfulStatusCode, res.headers);
  };
  app.notFound((c) =>
    respond(c, Errors.notFound(`Route ${c.req.method} ${c.req.path} not found.`)),
  );
  app.onError((err, c) => {
    if (!(err instanceof MaitredError)) logger.error("unhandled error", { err, path: c.req.path });
    return respond(c, err);
  });
  return app;
}
