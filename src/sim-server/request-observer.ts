/**
 * Per-request lifecycle hooks the HTTP layer calls, for metrics the engine does not keep
 * (SGLang's tokenizer-side counters and buckets). vLLM's metrics come from EngineStats, so the
 * vLLM personality uses `noopObserver`.
 */

export interface FinishedRequest {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Arrival to last token, engine seconds. */
  e2eSeconds: number;
}

export interface RequestObserver {
  firstToken(ttftSeconds: number): void;
  interToken(gapSeconds: number): void;
  finished(request: FinishedRequest): void;
  aborted(): void;
}

export const noopObserver: RequestObserver = {
  firstToken: () => {},
  interToken: () => {},
  finished: () => {},
  aborted: () => {},
};
