/**
 * The simulated engine's contract: a pure, deterministic step function over a clock it is
 * given (issue #2 part 2). The HTTP driver (src/sim-server) runs it in scaled real time; the
 * cluster simulator runs many of them in virtual time. Times are seconds on the engine's clock.
 */

export interface TimingCoefficients {
  /** Fixed per-step overhead (s). */
  tFixed: number;
  /** Weight-read floor per step (s). */
  tWeights: number;
  /** Seconds per scheduled token (T = tokens in the step). */
  b: number;
  /** Seconds per KV token read by attention (K = Σ context lengths in the step). */
  c: number;
  /** Seconds per prefill-attention unit (A = Σ new·context for prefill chunks). */
  d: number;
}

export interface EngineConfig {
  modelName: string;
  blockSize: number;
  numGpuBlocks: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  maxModelLen: number;
  enablePrefixCaching: boolean;
  timing: TimingCoefficients;
  /** Seeds output lengths and generated token ids. */
  seed: number;
}

export interface EngineRequest {
  id: string;
  promptTokens: readonly number[];
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  /** Engine-clock arrival time (s). */
  arrivalTime: number;
}

export type FinishReason = "stop" | "length" | "abort";

export interface RequestOutput {
  id: string;
  /** Tokens sampled in this step (0 or 1 per step; 0 while prefilling). */
  newTokenIds: number[];
  /** Set when the request finished in this step. */
  finishReason?: FinishReason;
  /** Prompt tokens served from the prefix cache at first admission. */
  numCachedTokens: number;
  promptTokens: number;
  completionTokens: number;
}

export interface StepResult {
  /** Engine-clock time the step started and its modelled duration (s). */
  startTime: number;
  duration: number;
  scheduledTokens: number;
  numRunning: number;
  outputs: RequestOutput[];
}
