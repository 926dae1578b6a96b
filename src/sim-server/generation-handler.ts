/**
 * `POST /v1/chat/completions` and `POST /v1/completions`: an SSE stream (stream-response.ts)
 * or one JSON body (json-response.ts).
 */

import type { Context } from "hono";
import type { ChoicesDialect } from "./answer-fields.ts";
import { withPriority } from "./engine-driver.ts";
import { jsonResponse } from "./json-response.ts";
import { type GenerationSpec, type PrepareDeps, prepareGeneration } from "./prepare-generation.ts";
import { streamResponse } from "./stream-response.ts";
import type { GenerationDeps } from "./track-generation.ts";

export type GenerationHandlerDeps = PrepareDeps & GenerationDeps;

/**
 * What one request runs with: on an engine that schedules by priority, its engine requests
 * carry its `priority` field; a first come, first served engine never sees the field.
 */
export function requestDeps(deps: GenerationHandlerDeps, spec: GenerationSpec): GenerationDeps {
  if (spec.priority === null || deps.options.schedulingPolicy !== "priority") return deps;
  return { ...deps, driver: withPriority(deps.driver, spec.priority) };
}

export function generationHandler(endpoint: ChoicesDialect, deps: GenerationHandlerDeps) {
  return async function generate(c: Context): Promise<Response> {
    const spec = await prepareGeneration(c.req.raw, endpoint, deps);
    const headers = { "x-request-id": spec.requestId };
    const run = requestDeps(deps, spec);
    return spec.stream
      ? streamResponse(c.req.raw.signal, spec, run, headers)
      : jsonResponse(c.req.raw.signal, spec, run, headers);
  };
}
