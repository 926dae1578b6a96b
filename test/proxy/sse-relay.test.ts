import assert from "node:assert/strict";
import { test } from "node:test";
import { createParser } from "eventsource-parser";
import fc from "fast-check";
import { createSseRelay } from "../../src/proxy/sse-relay.ts";

const chunk = (content: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;
const USAGE =
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3}}\n\n';
const DONE = "data: [DONE]\n\n";

function run(dropUsage: boolean, pieces: string[]) {
  const counts: number[] = [];
  const relay = createSseRelay(dropUsage, { onContent: (n) => counts.push(n) });
  let out = "";
  for (const p of pieces) out += relay.push(Buffer.from(p))?.toString() ?? "";
  out += relay.flush()?.toString() ?? "";
  return { out, counts, relay };
}

test("content events are counted and the stream passes through byte for byte", () => {
  const stream = [chunk("a"), chunk("b"), chunk("c"), USAGE, DONE];
  const { out, counts, relay } = run(false, stream);
  assert.equal(out, stream.join(""));
  assert.deepEqual(counts, [1, 2, 3]);
  assert.deepEqual(relay.usage, { promptTokens: 12, completionTokens: 3, totalTokens: 15 });
});

test("the usage event maitred added is removed when the client did not ask for it", () => {
  const { out, relay } = run(true, [chunk("a"), USAGE, DONE]);
  assert.equal(out, chunk("a") + DONE);
  assert.equal(relay.usage?.totalTokens, 15, "the books still learn the usage");
});

test("events split across upstream chunks are held until complete, then scanned once", () => {
  const whole = chunk("a") + USAGE + DONE;
  const pieces = [whole.slice(0, 7), whole.slice(7, 150), whole.slice(150, 151), whole.slice(151)];
  const dropped = run(true, pieces);
  assert.equal(dropped.out, chunk("a") + DONE);
  assert.deepEqual(dropped.counts, [1]);
  const kept = run(false, pieces);
  assert.equal(kept.out, whole);
});

test("a chunk of whole events with nothing to drop is forwarded as the same buffer", () => {
  const relay = createSseRelay(true, { onContent: () => {} });
  const buf = Buffer.from(chunk("x") + chunk("y"));
  assert.equal(relay.push(buf), buf, "no copy on the hot path");
});

test("the role chunk with empty content counts; usage-only and error events do not", () => {
  const role = 'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n';
  const err =
    'data: {"error":{"message":"boom","type":"InternalServerError","param":null,"code":500}}\n\n';
  const { counts } = run(false, [role, chunk("a"), err, USAGE, DONE]);
  assert.deepEqual(counts, [1, 2]);
});

test("continuous usage stats: the last usage wins and content events carrying usage still count", () => {
  const withUsage = (n: number) =>
    `data: {"choices":[{"index":0,"delta":{"content":"t"}}],"usage":{"prompt_tokens":5,"total_tokens":${5 + n},"completion_tokens":${n}}}\n\n`;
  const { out, counts, relay } = run(true, [withUsage(1), withUsage(2), DONE]);
  assert.equal(out, withUsage(1) + withUsage(2) + DONE, "content events are never dropped");
  assert.deepEqual(counts, [1, 2]);
  assert.equal(relay.usage?.completionTokens, 2);
});

test("completions chunks with usage null are content, the final usage object is not", () => {
  const c =
    'data: {"object":"text_completion","choices":[{"index":0,"text":" world"}],"usage":null}\n\n';
  const u =
    'data: {"object":"text_completion","choices":[],"usage":{"prompt_tokens":5,"total_tokens":7,"completion_tokens":2}}\n\n';
  const { out, counts, relay } = run(true, [c, u, DONE]);
  assert.equal(out, c + DONE);
  assert.deepEqual(counts, [1]);
  assert.equal(relay.usage?.totalTokens, 7);
});

test("cached tokens from prompt_tokens_details reach the usage", () => {
  const u =
    'data: {"choices":[],"usage":{"prompt_tokens":100,"total_tokens":110,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":64}}}\n\n';
  assert.equal(run(false, [u]).relay.usage?.cachedTokens, 64);
});

test("a trailing event without its blank line is still delivered at the end", () => {
  const { out } = run(false, [chunk("a"), "data: [DONE]\n"]);
  assert.equal(out, `${chunk("a")}data: [DONE]\n`);
});

test("several events in one upstream chunk are reported once with the count before and after", () => {
  const calls: Array<[number, number]> = [];
  const relay = createSseRelay(false, { onContent: (n, prev) => calls.push([n, prev]) });
  relay.push(Buffer.from(chunk("a") + chunk("b") + chunk("c")));
  relay.push(Buffer.from(chunk("d") + USAGE + DONE));
  assert.deepEqual(calls, [
    [3, 0],
    [4, 3],
  ]);
});

/** The events a client reads from `text`, by eventsource-parser (the reference for framing). */
function eventsOf(text: string): string[] {
  const events: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e.data) });
  parser.feed(text);
  parser.feed("\n\n");
  return events;
}

test("any line ending and any split: bytes, events, usage and content counts as a client reads them", () => {
  const eolArb = fc.constantFrom("\n", "\r\n", "\r");
  const eventArb = fc.oneof(
    fc.record({ kind: fc.constant("content" as const), text: fc.stringMatching(/^[a-z ]{0,8}$/) }),
    fc.record({ kind: fc.constant("usage" as const), text: fc.constant("") }),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(eventArb, eolArb, eolArb), { minLength: 1, maxLength: 6 }),
      fc.array(fc.nat(), { maxLength: 6 }),
      fc.boolean(),
      (events, cuts, dropUsage) => {
        let stream = "";
        let contents = 0;
        let usages = 0;
        for (const [e, eol1, eol2] of events) {
          const line = e.kind === "content" ? chunk(e.text).trimEnd() : USAGE.trimEnd();
          // `\r` then `\n` would read as one `\r\n`: the blank line after `\r` is `\r` or `\r\n`.
          stream += line + eol1 + (eol1 === "\r" && eol2 === "\n" ? "\r\n" : eol2);
          if (e.kind === "content") contents++;
          else usages++;
        }
        stream += `data: [DONE]\n\n`;
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const pieces: string[] = [];
        let at = 0;
        for (const p of [...points, stream.length]) {
          if (p > at) pieces.push(stream.slice(at, p));
          at = Math.max(at, p);
        }
        const { out, counts, relay } = run(dropUsage, pieces);
        const want = eventsOf(stream).filter((d) => !(dropUsage && d.includes('"usage"')));
        assert.deepEqual(eventsOf(out), want, "the client reads the same events");
        if (!dropUsage) assert.equal(out, stream, "bytes pass through unchanged");
        assert.equal(relay.contentEvents, contents);
        assert.equal(counts.at(-1) ?? 0, contents);
        assert.equal(relay.usage === null, usages === 0, "usage found wherever it is");
      },
    ),
  );
});
