/**
 * The two ways a generation reaches its client, for every API the simulated backend serves:
 * as an SSE stream written step by step, or as one body once it finished. Both abort the
 * engine requests when the client goes away (the stream's `cancel` or the request's
 * AbortSignal), and both end exactly once.
 */
import { Errors, type MaitredError } from "../errors.ts";
import type { UsageCounts } from "./openai-shapes.ts";
import { SSE_CONTENT_TYPE } from "./openai-shapes.ts";
import type { GenerationSpec } from "./prepare-generation.ts";
import { type ChoiceStep, type GenerationDeps, startGeneration } from "./track-generation.ts";

export interface StreamEvents {
  /** The text of one step; `first` on the request's first output. */
  step(step: ChoiceStep, first: boolean): string;
  /** The text that ends the stream once every choice finished. */
  finished(usage: UsageCounts): string;
  /** The text that ends a stream that failed (the injected mid-stream error). */
  fail(error: MaitredError): string;
}

/** The SSE answer: each step's text as it comes, closed after `finished` or `fail`. */
export function streamGeneration(
  signal: AbortSignal,
  spec: GenerationSpec,
  deps: GenerationDeps,
  headers: Record<string, string>,
  events: StreamEvents,
): Response {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const push = (text: string, last: boolean) => {
    if (!open) return;
    controller.enqueue(encoder.encode(text));
    if (!last) return;
    open = false;
    controller.close();
  };
  // Submitted before the Response exists, so an engine rejection is still a plain 4xx.
  const generation = startGeneration(deps, spec, {
    step: (step, first) => push(events.step(step, first), false),
    finished: (usage) => push(events.finished(usage), true),
    fail: (error) => push(events.fail(error), true),
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

/** The whole answer: every step collected, then the body `build` makes once all finished. */
export function collectGeneration(
  signal: AbortSignal,
  spec: GenerationSpec,
  deps: GenerationDeps,
  headers: Record<string, string>,
  step: (step: ChoiceStep) => void,
  build: (usage: UsageCounts) => string,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const generation = startGeneration(deps, spec, {
      step,
      finished(usage) {
        signal.removeEventListener("abort", onAbort);
        resolve(
          new Response(build(usage), {
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
