import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import {
  emptyTimeline,
  heldStreamLines,
  promptOfTokens,
  streamTimeline,
  type Timeline,
  timelineReader,
} from "../../../src/bench/scenarios/held-stream.ts";

/** A clock read as the reader times each line: 10, 20, 30… */
function steps() {
  let t = 0;
  return () => (t += 10);
}

describe("reading a held stream's answer", () => {
  it("sorts comments, events, the end and anything else, whole lines only", () => {
    const t = emptyTimeline();
    const read = timelineReader(t, steps());
    read(": maitred held position=1 waited_ms=0\n\n: maitred ");
    assert.equal(t.comments.length, 1, "half a comment line was read");
    read('held position=1 waited_ms=15000\n\ndata: {"choices":[]}\n\ndata: {"choi');
    read('ces":[]}\n\ndata: {"error":{"message":"x"}}\n\ndata: [DONE]\n\n');
    assert.deepEqual(t.comments, [
      [10, ": maitred held position=1 waited_ms=0"],
      [20, ": maitred held position=1 waited_ms=15000"],
    ]);
    assert.equal(t.events, 3);
    assert.equal(t.firstEventMs, 30, "the first event's time is kept, not the last's");
    assert.equal(t.done, true);
    assert.equal(t.other, 'data: {"error":{"message":"x"}}', "an error event is unexpected");
  });

  it("keeps a body that is not a stream (an error answered as JSON) as unexpected", () => {
    const t = emptyTimeline();
    timelineReader(t, steps())('{"error":{"message":"no room"}}\n');
    assert.equal(t.other, '{"error":{"message":"no room"}}');
    assert.equal(t.events, 0);
    assert.equal(t.done, false);
  });

  it("times a streamed answer from a server: head, held header, comments, events, [DONE]", async () => {
    let body: { program_id?: string; stream?: boolean; max_tokens?: number } = {};
    const server = createServer((req, res) => {
      let text = "";
      req.on("data", (d) => {
        text += d;
      });
      req.on("end", () => {
        body = JSON.parse(text);
        res.writeHead(200, { "content-type": "text/event-stream", "x-maitred-held": "true" });
        res.write(": maitred held position=1 waited_ms=3\n\n");
        res.end('data: {"choices":[]}\n\ndata: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const t = await streamTimeline(url, "waiter", "time work", 16);
      assert.deepEqual(
        [body.program_id, body.stream, body.max_tokens],
        ["waiter", true, 16],
        "the request the router reads",
      );
      assert.equal(t.status, 200);
      assert.equal(t.held, "true");
      assert.deepEqual(
        t.comments.map(([, line]) => line),
        [": maitred held position=1 waited_ms=3"],
      );
      assert.equal(t.events, 1);
      assert.equal(t.done, true);
      assert.ok(t.headMs !== null && t.endMs !== null && t.headMs <= t.endMs);
    } finally {
      server.close();
    }
  });

  it("writes prompts of four-letter words, one token each", () => {
    const p = promptOfTokens(10);
    assert.equal(p.split(" ").length, 10);
    assert.ok(p.split(" ").every((w) => w.length === 4));
  });
});

describe("bench:held-stream's printing", () => {
  const holder: Timeline = { ...emptyTimeline(), events: 301, done: true, endMs: 45_000 };
  const waiter: Timeline = {
    ...emptyTimeline(),
    headMs: 12,
    status: 200,
    held: "true",
    comments: [
      [12, ": maitred held position=1 waited_ms=3"],
      [15_020, ": maitred held position=1 waited_ms=15011"],
      [30_010, ": maitred held position=1 waited_ms=30001"],
      [44_600, ": maitred backend=http://x paused_ms=44580"],
    ],
    firstEventMs: 44_650,
    events: 17,
    done: true,
    endMs: 45_100,
  };

  it("lists every comment and the gaps between the keep-alives alone", () => {
    assert.deepEqual(heldStreamLines("on", holder, waiter), [
      "hold keep-alive: on",
      "holder: 301 events in 45.000 s, ended with [DONE]",
      "waiter: head after 0.012 s (status 200, x-maitred-held true)",
      "  keep-alive comments: 3",
      "      0.012 s  : maitred held position=1 waited_ms=3",
      "     15.020 s  : maitred held position=1 waited_ms=15011",
      "     30.010 s  : maitred held position=1 waited_ms=30001",
      "     44.600 s  : maitred backend=http://x paused_ms=44580",
      "  gaps between keep-alives: 15.008 s, 14.990 s (min 14.990 s, max 15.008 s)",
      "  first event after 44.650 s; 17 events",
      "  completed: ended with data: [DONE] after 45.100 s",
    ]);
  });

  it("says what is missing: no held header, no gaps, a cut stream, an unexpected body", () => {
    const lines = heldStreamLines(
      "off",
      { ...holder, done: false },
      { ...emptyTimeline(), headMs: 5, status: 429, other: '{"error":{}}' },
    );
    assert.deepEqual(lines, [
      "hold keep-alive: off",
      "holder: 301 events in 45.000 s, cut",
      '  unexpected: {"error":{}}',
      "waiter: head after 0.005 s (status 429, x-maitred-held absent)",
      "  keep-alive comments: 0",
      "  first event after -; 0 events",
      "  NOT completed after -",
    ]);
  });
});
