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
