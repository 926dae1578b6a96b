import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  countTokens,
  decode,
  encode,
  SPECIAL_TOKENS,
  specialTokenId,
  textOfTokens,
  VOCAB_SIZE,
} from "../../src/engine/tokenizer.ts";
import { WORD_PIECES } from "../../src/engine/word-list.ts";

describe("tokenizer", () => {
  it("splits words into ≤4-letter pieces with a leading space riding on the first piece", () => {
    const ids = encode("Hello wonderful world");
    const pieces = ids.map((id) => decode([id]));
    assert.deepEqual(pieces, ["Hell", "o", " wond", "erfu", "l", " worl", "d"]);
  });

  it("gives digits, punctuation, newlines and lone spaces one token each", () => {
    assert.equal(countTokens("a1, 2\n"), 6, "a, 1, ',', ' ', 2, newline");
    assert.equal(countTokens("  x"), 2, "a space before a space stands alone; the last rides on x");
  });

  it("is deterministic: the same text gives the same ids on every call", () => {
    const text = "The quick brown fox jumps over 13 lazy dogs.";
    assert.deepEqual(encode(text), encode(text));
  });

  it("keeps every id inside the vocabulary", () => {
    for (const id of encode("Zebra xylophone qwerty ÅÄÖ 漢字 🙂 !@#")) {
      assert.ok(id >= 0 && id < VOCAB_SIZE, `id ${id} outside [0, ${VOCAB_SIZE})`);
    }
  });

  it("is compositional at whitespace boundaries: counts of joined texts add up", () => {
    const parts = ["You are a helpful agent.", " Fix the failing test", "\nin src/app.ts", " now"];
    let joined = "";
    let expected: number[] = [];
    for (const p of parts) {
      joined += p;
      expected = expected.concat(encode(p));
      assert.deepEqual(encode(joined), expected, `after appending ${JSON.stringify(p)}`);
    }
  });

  it("does not promise compositionality when a word is split mid-letters", () => {
    assert.notDeepEqual(encode("abcdef"), encode("abc").concat(encode("def")));
  });

  it("encodes special strings as single tokens above the vocabulary", () => {
    for (const s of SPECIAL_TOKENS) {
      assert.deepEqual(encode(s), [specialTokenId(s)], s);
      assert.equal(decode(encode(s)), s);
    }
  });

  it("round-trips text it encoded through decode", () => {
    const text = "Agent step 3: run `npm test` → 2 failures (see log).\n";
    assert.equal(decode(encode(text)), text);
  });

  it("decodes word-piece ids to readable text that re-encodes to the same ids", () => {
    const ids = WORD_PIECES.map((_, i) => i).reverse();
    assert.deepEqual(encode(decode(ids)), ids);
  });

  it("builds text of exactly n tokens for any seed", () => {
    for (const n of [0, 1, 2, 15, 16, 17, 1000]) {
      for (const seed of [0, 1, 42]) {
        assert.equal(encode(textOfTokens(n, seed)).length, n, `n=${n} seed=${seed}`);
      }
    }
  });

  it("makes distinct content per seed and identical content for the same seed", () => {
    assert.equal(textOfTokens(64, 7), textOfTokens(64, 7));
    assert.notEqual(textOfTokens(64, 7), textOfTokens(64, 8));
    assert.notDeepEqual(encode(textOfTokens(16, 1)), encode(textOfTokens(16, 2)));
  });

  it("keeps generated texts compositional so appended observations add their counts", () => {
    const a = textOfTokens(100, 1);
    const b = textOfTokens(37, 2);
    assert.deepEqual(encode(a + b), encode(a).concat(encode(b)));
  });
});
