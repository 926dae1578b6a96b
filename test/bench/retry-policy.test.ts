import assert from "node:assert/strict";
import { test } from "node:test";
import { isRetryable, retryDelayMs } from "../../src/bench/retry-policy.ts";

test("retried as the OpenAI clients retry: no answer, 408, 409, 429 and 5xx", () => {
  for (const status of [null, 408, 409, 429, 500, 502, 503, 504]) {
    assert.equal(isRetryable(status), true, String(status));
  }
  for (const status of [400, 401, 403, 404, 413, 422]) {
    assert.equal(isRetryable(status), false, String(status));
  }
});

test("the wait: Retry-After when reasonable, else 0.5 s doubling to 8 s, less up to a quarter", () => {
  assert.equal(retryDelayMs(0, 2000, 0.9), 2000, "the server's Retry-After");
  assert.equal(retryDelayMs(0, 0, 0), 500, "Retry-After 0 is not a wait");
  assert.equal(retryDelayMs(0, 90_000, 0), 500, "a minute or more is not reasonable");
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((r) => retryDelayMs(r, null, 0)),
    [500, 1000, 2000, 4000, 8000, 8000],
  );
  assert.equal(retryDelayMs(1, null, 0.999999), 1000 * (1 - 0.999999 * 0.25));
});
