import { CHARS_PER_TOKEN_SAMPLE_WEIGHT, INITIAL_CHARS_PER_TOKEN } from "./scheduler-config.ts";

/**
 * The learned characters-per-token ratio used to estimate a request's tokens before the engine
 * reports usage (ThunderAgent's `char_to_token_ratio`). One ratio
 * for the whole router: the estimate only bridges the gap until `usage` arrives.
 */
export interface TokenEstimator {
  /** Current characters per token. */
  readonly ratio: number;
  /** Tokens for `chars` characters (rounded up: never under-reserve a non-empty prompt). */
  tokensFor(chars: number): number;
  /** Learn from one response: `promptChars` characters were `promptTokens` tokens. */
  learn(promptChars: number, promptTokens: number): void;
}

export function createTokenEstimator(initialRatio = INITIAL_CHARS_PER_TOKEN): TokenEstimator {
  let ratio = initialRatio;
  let learned = false;
  return {
    get ratio() {
      return ratio;
    },
    tokensFor(chars: number): number {
      return chars > 0 ? Math.ceil(chars / ratio) : 0;
    },
    learn(promptChars: number, promptTokens: number): void {
      // A zero or missing sample would poison the ratio (division by zero, NaN).
      if (!(promptChars > 0) || !(promptTokens > 0)) return;
      const sample = promptChars / promptTokens;
      // First sample is assigned directly, later ones with momentum.
      ratio = learned
        ? CHARS_PER_TOKEN_SAMPLE_WEIGHT * sample + (1 - CHARS_PER_TOKEN_SAMPLE_WEIGHT) * ratio
        : sample;
      learned = true;
    },
  };
}
