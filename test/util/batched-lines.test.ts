import assert from "node:assert/strict";
import { test } from "node:test";
import { batchedLines } from "../../src/util/logger.ts";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test("lines of one turn are written together, in order, at the end of the turn", async () => {
  const writes: string[] = [];
  const sink = batchedLines((text) => writes.push(text));
  sink.line("a");
  sink.line("b");
  assert.deepEqual(writes, [], "nothing written within the turn");
  await nextTurn();
  assert.deepEqual(writes, ["a\nb\n"]);
  sink.line("c");
  await nextTurn();
  assert.deepEqual(writes, ["a\nb\n", "c\n"], "the next turn's lines in a write of their own");
});

test("flush writes what is gathered at once, and nothing is written twice", async () => {
  const writes: string[] = [];
  const sink = batchedLines((text) => writes.push(text));
  sink.line("last words");
  sink.flush();
  assert.deepEqual(writes, ["last words\n"]);
  await nextTurn();
  assert.deepEqual(writes, ["last words\n"]);
});

test("a stderr nobody reads holds at most the cap: past it a turn's lines are dropped and counted, and the first write after says how many", () => {
  const cap = 64 * 1024;
  // A reader that stalls: every byte written stays in memory until it reads again.
  let unread = 0;
  const writes: string[] = [];
  const sink = batchedLines(
    (text) => {
      writes.push(text);
      unread += Buffer.byteLength(text);
    },
    { buffered: () => unread, maxBufferedBytes: cap },
  );
  const line = JSON.stringify({ level: "info", msg: "request", pad: "x".repeat(380) });
  const turns = 2000;
  for (let t = 0; t < turns; t++) {
    for (let i = 0; i < 10; i++) sink.line(line);
    sink.flush();
  }
  const lineBytes = Buffer.byteLength(line) + 1;
  // What went out is the cap, overshot by at most one turn's lines.
  assert.ok(unread <= cap + 10 * lineBytes, `got ${unread} bytes unread, want ≤ ${cap} + a turn`);
  assert.equal(sink.bufferedBytes(), unread);
  const written = writes.join("").split("\n").filter(Boolean).length;
  assert.equal(sink.droppedLines(), turns * 10 - written, "every line not written is counted");
  assert.ok(sink.droppedLines() > 0.9 * turns * 10, "most were dropped while the reader slept");

  // The reader comes back: the next turn's first line says what was lost.
  unread = 0;
  sink.line("after");
  sink.flush();
  const [notice, after] = (writes.at(-1) as string).trimEnd().split("\n");
  assert.equal(JSON.parse(notice as string).dropped, sink.droppedLines());
  assert.equal(JSON.parse(notice as string).level, "warn");
  assert.equal(after, "after");
});
