/**
 * One request's life on the engine, shared by the streaming and the JSON responses: submit,
 * turn each step's output into text and usage, stop on an injected mid-stream error, and end
 * exactly once whichever way it ends (finish, injected error, client gone).
 */

import { decode } from "../engine/tokenizer.ts";
import type { FinishReason, RequestOutput } from "../engine/types.ts";
import { Errors, type MaitredError } from "../errors.ts";
import type { EngineDriver } from "./engine-driver.ts";
import { STREAM_ERROR_STATUS } from "./failure-injection.ts";
import type { UsageCounts } from "./openai-shapes.ts";
import type { GenerationSpec } from "./prepare-generation.ts";
import type { RequestObserver } from "./request-observer.ts";

export interface GenerationSink {
  /** One step's tokens (`first` on the request's first output), the last one with `finish`. */
  tokens(text: string, first: boolean, finish: FinishReason | null, usage: UsageCounts): void;
  /** The injected mid-stream failure: the response must end with this error. */
  fail(error: MaitredError): void;
}

export interface Generation {
  /** The client is gone: abort the engine request (no-op once ended). */
  cancel(): void;
}

export interface GenerationDeps {
  driver: EngineDriver;
  observer: RequestObserver;
  /** --enable-prompt-tokens-details. */
  reportCachedTokens: boolean;
}

export function startGeneration(
  deps: GenerationDeps,
  spec: GenerationSpec,
  sink: GenerationSink,
): Generation {
  const { driver, observer } = deps;
  let ended = false;
  let completionTokens = 0;
  let cachedTokens = 0;
  let lastTokenTime = 0;

  const usage = (): UsageCounts => ({
    promptTokens: spec.promptTokens.length,
    completionTokens,
    // v0.11-era vLLM omits the details when nothing was cached.
    cachedTokens: deps.reportCachedTokens && cachedTokens > 0 ? cachedTokens : null,
  });

  const end = (aborted: boolean) => {
    if (ended) return;
    ended = true;
    if (aborted) {
      driver.abort(spec.engineId);
      observer.aborted();
    }
  };

  const onOutput = (output: RequestOutput, time: number) => {
    if (ended || (output.newTokenIds.length === 0 && output.finishReason === undefined)) return;
    const limit = spec.streamErrorAfter;
    if (limit !== null && completionTokens >= limit && output.finishReason === undefined) {
      end(true);
      sink.fail(Errors.injected(STREAM_ERROR_STATUS));
      return;
    }
    const first = completionTokens === 0;
    if (first) observer.firstToken(time - arrivalTime);
    else observer.interToken(time - lastTokenTime);
    lastTokenTime = time;
    completionTokens += output.newTokenIds.length;
    cachedTokens = output.numCachedTokens;
    const finish = output.finishReason ?? null;
    if (finish !== null) {
      ended = true;
      observer.finished({
        promptTokens: spec.promptTokens.length,
        completionTokens,
        cachedTokens,
        e2eSeconds: time - arrivalTime,
      });
    }
    sink.tokens(decode(output.newTokenIds), first, finish, usage());
  };

  const arrivalTime = driver.submit(
    {
      id: spec.engineId,
      promptTokens: spec.promptTokens,
      maxTokens: spec.maxTokens,
      minTokens: spec.minTokens,
      ignoreEos: spec.ignoreEos,
    },
    { onOutput },
  );

  return { cancel: () => end(true) };
}
