import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  answerChunks,
  cpuPerEvent,
  eventCostsReport,
  measureEventCosts,
  rebuilt,
  relayed,
} from "../../../src/bench/overhead/event-costs.ts";
import { DIALECTS } from "../../../src/proxy/dialects/all-dialects.ts";

describe("bench:events' streams", () => {
  it("one event per chunk: the role, each token, the usage and [DONE]", () => {
    const chunks = answerChunks("chat", 4);
    assert.equal(chunks.length, 1 + 4 + 2);
    for (const c of chunks) assert.match(c.toString(), /^data: .*\n\n$/s);
    assert.equal(chunks.at(-1)?.toString(), "data: [DONE]\n\n");
    assert.match(chunks.at(-2)?.toString() ?? "", /"usage":\{/);
  });

  it("the relay and the rebuild of every API take their whole answer", () => {
    for (const api of ["chat", "messages", "responses"] as const) {
      const stream = answerChunks(api, 8);
      relayed(DIALECTS[api])(stream);
      rebuilt(DIALECTS[api])(stream);
    }
  });

  it("an answer cut short fails the measure rather than timing a broken path", () => {
    const stream = answerChunks("chat", 4);
    assert.throws(() => relayed(DIALECTS.chat)(stream.slice(0, 3)), /the relay read no usage/);
    assert.throws(() => rebuilt(DIALECTS.chat)(stream.slice(0, 3)), /the rebuild made no answer/);
  });
});

describe("CPU per event", () => {
  it("is the CPU used after the warm-up over the events fed, 50 answers at least", () => {
    const stream = answerChunks("chat", 4);
    let calls = 0;
    const cpu = [1_000, 1_700];
    const perEvent = cpuPerEvent(stream, () => calls++, {
      seconds: 0,
      warmup: 3,
      cpuMicros: () => cpu.shift() ?? assert.fail("read the CPU more than twice"),
    });
    assert.equal(calls, 3 + 50);
    assert.equal(perEvent, 700 / (50 * 7));
  });

  it("a row per length and API, the APIs of a length together", () => {
    let t = 0;
    const rows = measureEventCosts(
      DIALECTS,
      ["chat", "messages"],
      { seconds: 0, warmup: 0, cpuMicros: () => (t += 350) },
      [1, 2],
    );
    assert.deepEqual(
      rows.map((r) => [r.api, r.tokens, r.events]),
      [
        ["chat", 1, 4],
        ["messages", 1, 6],
        ["chat", 2, 5],
        ["messages", 2, 7],
      ],
    );
    assert.equal(rows[0].streamedUs, 350 / (50 * 4), "one clock step over one batch");
  });
});

describe("bench:events' report", () => {
  it("says the time per case, then the table, figures to two places", () => {
    const report = eventCostsReport(
      [{ api: "chat", tokens: 4, events: 7, streamedUs: 6.384, plainUs: 16.675 }],
      0.5,
    );
    assert.equal(
      report,
      "CPU µs per event, maitred's per-event code alone (0.5 s a case, one event per chunk):\n\n" +
        "| api | tokens | events | streamed (relay) | plain (rebuild) |\n" +
        "| --- | --- | ---: | ---: | ---: |\n" +
        "| chat | 4 | 7 | 6.38 | 16.68 |",
    );
  });
});
