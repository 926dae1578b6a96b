/**
 * `POST /v1/chat/completions` and `POST /v1/completions`: an SSE stream or one JSON body.
 * A client that goes away aborts its engine request, through the
 * stream's `cancel` or the request's AbortSignal.
 */

import type { Context } from "hono";
import { Errors, errorBodyJson } from "../errors.ts";
import {
  completionResponseJson,
  createChunkWriter,
  type Endpoint,
  SSE_CONTENT_TYPE,
  SSE_DONE,
  sseEvent,
} from "./openai-shapes.ts";
import { type GenerationSpec, type PrepareDeps, prepareGeneration } from "./prepare-generation.ts";
import { type GenerationDeps, startGeneration } from "./track-generation.ts";

export type GenerationHandlerDeps = PrepareDeps & GenerationDeps;

export function generationHandler(endpoint: Endpoint, deps: GenerationHandlerDeps) {
  return async function generate(c: Context): Promise<Response> {
    const spec = await prepareGeneration(c.req.raw, endpoint, deps);
    const headers = { "x-request-id": spec.requestId };
    return spec.stream
      ? streamResponse(c.req.raw.signal, spec, deps, headers)
      : jsonResponse(c.req.raw.signal, spec, deps, headers);
  };
}

function streamResponse(
  signal: AbortSignal,
  spec: GenerationSpec,
  deps: GenerationDeps,
  headers: Record<string, string>,
): Response {
  const encoder = new TextEncoder();
  const writer = createChunkWriter(spec.meta);
  const chat = spec.meta.endpoint === "chat";
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const push = (text: string) => controller.enqueue(encoder.encode(text));
  const close = () => {
    if (!open) return;
    open = false;
    push(SSE_DONE);
    controller.close();
  };
  // Submitted before the Response exists, so an engine rejection is still a plain 4xx.
  const generation = startGeneration(deps, spec, {
    tokens(text, first, finish, usage) {
      if (!open) return;
      const running = spec.continuousUsageStats ? usage : null;
      if (first && chat) push(writer.role(running && { ...running, completionTokens: 0 }));
      push(writer.delta(text, finish, running));
      if (finish === null) return;
      if (spec.includeUsage) push(writer.usage(usage));
      close();
    },
    // vLLM sends a mid-stream error as one data event, then [DONE].
    fail(error) {
      if (!open) return;
      push(sseEvent(errorBodyJson(error)));
      close();
    },
  });
  const cancel = () => {
    open = false;
    generation.cancel();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel,
  });
  if (signal.aborted) cancel();
  else signal.addEventListener("abort", cancel, { once: true });
  return new Response(stream, {
    status: 200,
    headers: { ...headers, "content-type": SSE_CONTENT_TYPE },
  });
}

function jsonResponse(
  signal: AbortSignal,
  spec: GenerationSpec,
  deps: GenerationDeps,
  headers: Record<string, string>,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const parts: string[] = [];
    const generation = startGeneration(deps, spec, {
      tokens(text, _first, finish, usage) {
        parts.push(text);
        if (finish === null) return;
        signal.removeEventListener("abort", onAbort);
        const body = completionResponseJson(spec.meta, parts.join(""), finish, usage);
        resolve(
          new Response(body, {
            status: 200,
            headers: { ...headers, "content-type": "application/json" },
          }),
        );
      },
      fail(error) {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    });
    function onAbort() {
      generation.cancel();
      reject(Errors.clientClosed());
    }
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}
