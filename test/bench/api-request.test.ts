import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { BENCH_APIS } from "../../src/bench/api-request.ts";
import { createStepClient } from "../../src/bench/step-client.ts";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { startTestBackend, TEST_MODEL } from "../sim-server/helpers.ts";

describe("api-request", () => {
  /**
   * `bench --api`: the same step sent as a chat completion, a Messages request and a Responses
   * request to a simulated backend costs the same prompt and the same exact output, streamed or
   * plain, so runs over the three APIs compare like for like.
   */
  let backend: SimBackend;
  before(async () => {
    backend = await startTestBackend({ enablePromptTokensDetails: true });
  });
  after(() => backend.close());

  const messages = [
    { role: "system", content: "You are an agent." },
    { role: "user", content: "Fix the failing test in the repository." },
    { role: "assistant", content: "Looking at the test output now." },
    { role: "user", content: "The output says: 3 failed, 12 passed." },
  ];

  test("each API answers a step with the same prompt and output tokens, streamed and plain", async () => {
    const seen: string[] = [];
    for (const api of BENCH_APIS) {
      const client = createStepClient({ url: backend.url, connections: 2, api });
      try {
        for (const stream of [true, false]) {
          let firstTokens = 0;
          const res = await client.send(
            {
              programId: `p-${api}`,
              model: TEST_MODEL,
              messages,
              maxTokens: 9,
              stream,
              onFirstToken: () => firstTokens++,
            },
            new AbortController().signal,
          );
          assert.ok(res.ok, `${api} stream=${stream}: got ${JSON.stringify(res)}`);
          assert.equal(res.completionTokens, 9, `${api} stream=${stream}: output length`);
          assert.ok((res.text ?? "").length > 0, `${api} stream=${stream}: text`);
          assert.equal(firstTokens, stream ? 1 : 0);
          seen.push(`${res.promptTokens}`);
        }
      } finally {
        await client.close();
      }
    }
    assert.equal(new Set(seen).size, 1, `one prompt size for every API and mode, got ${seen}`);
  });
});
