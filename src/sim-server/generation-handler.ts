/**
 * `POST /v1/chat/completions` and `POST /v1/completions`: an SSE stream (stream-response.ts)
 * or one JSON body (json-response.ts).
 */

import type { Context } from "hono";
import type { ChoicesDialect } from "./answer-fields.ts";
import { jsonResponse } from "./json-response.ts";
import { type PrepareDeps, prepareGeneration } from "./prepare-generation.ts";
import { streamResponse } from "./stream-response.ts";
import type { GenerationDeps } from "./track-generation.ts";

export type GenerationHandlerDeps = PrepareDeps & GenerationDeps;

export function generationHandler(endpoint: ChoicesDialect, deps: GenerationHandlerDeps) {
  return async function generate(c: Context): Promise<Response> {
    const spec = await prepareGeneration(c.req.raw, endpoint, deps);
    const headers = { "x-request-id": spec.requestId };
    return spec.stream
      ? streamResponse(c.req.raw.signal, spec, deps, headers)
      : jsonResponse(c.req.raw.signal, spec, deps, headers);
  };
}
