/**
 * maitred's tokenizer: deterministic, fast, and the same everywhere (`/tokenize`, usage, chat
 * rendering, prefix hashing, the workload generator), as a simulated backend
 * needs. It is not a BPE; it only has to give stable, plausible counts.
 *
 * Pieces, scanning left to right:
 *   1. a special string (`<|im_start|>user`, `<|im_end|>`, ...): one token;
 *   2. a run of ASCII letters, optionally led by ONE space: chunks of at most
 *      MAX_LETTERS_PER_PIECE letters, the space riding on the first chunk (" hell", "o");
 *   3. anything else (a digit, punctuation, a space not followed by a letter, a newline, a
 *      non-ASCII code point): one token per character.
 *
 * Compositionality: encode(a + b) = encode(a) ++ encode(b) whenever `b` does not start with a
 * letter, or `a` ends with neither a letter nor a space (and the seam splits no special
 * string). So texts joined at whitespace boundaries have token counts that add up.
 *
 * Ids: WORD_PIECES occupy [0, WORD_PIECES.length) exactly; every other piece hashes into
 * [WORD_PIECES.length, VOCAB_SIZE); specials sit at VOCAB_SIZE + index.
 */

import { WORD_PIECES } from "./word-list.ts";

/** Llama-3's vocabulary is 128,256 ids; ours is of the same order so ids look realistic. */
export const VOCAB_SIZE = 128_000;
export const MAX_LETTERS_PER_PIECE = 4;

/** Special strings, each a single token. Longer strings first so matching is greedy. */
export const SPECIAL_TOKENS: readonly string[] = [
  "<|im_start|>system",
  "<|im_start|>user",
  "<|im_start|>assistant",
  "<|im_start|>tool",
  "<|im_start|>",
  "<|im_end|>",
  "<|endoftext|>",
];

export function specialTokenId(text: string): number {
  const i = SPECIAL_TOKENS.indexOf(text);
  if (i < 0) throw new RangeError(`not a special token: ${text}`);
  return VOCAB_SIZE + i;
}

/** Id of a WORD_PIECES entry (what generated tokens are made of). */
export function wordPieceId(piece: string): number {
  const i = WORD_PIECES.indexOf(piece);
  if (i < 0) throw new RangeError(`not a word piece: ${JSON.stringify(piece)}`);
  return i;
}

const SPACE = 32;
const LT = 60;
const PIPE = 124;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const HASHED_RANGE = VOCAB_SIZE - WORD_PIECES.length;
/** Bounds the id → text memory of `decode` on long-running servers. */
const MAX_REMEMBERED_PIECES = 1 << 20;

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

function fnv(text: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

// Word pieces keyed by their FNV hash; a hit is confirmed by comparing characters.
const wordByHash = new Map<number, number>();
WORD_PIECES.forEach((piece, i) => {
  wordByHash.set(fnv(piece, 0, piece.length), i);
});
const remembered = new Map<number, string>();

function pieceId(text: string, start: number, end: number): number {
  const h = fnv(text, start, end);
  const w = wordByHash.get(h);
  if (w !== undefined && WORD_PIECES[w] === text.slice(start, end)) return w;
  const id = WORD_PIECES.length + (h % HASHED_RANGE);
  if (remembered.size < MAX_REMEMBERED_PIECES && !remembered.has(id)) {
    remembered.set(id, text.slice(start, end));
  }
  return id;
}

function matchSpecial(text: string, i: number): number {
  if (text.charCodeAt(i + 1) !== PIPE) return -1;
  for (let s = 0; s < SPECIAL_TOKENS.length; s++) {
    if (text.startsWith(SPECIAL_TOKENS[s], i)) return s;
  }
  return -1;
}

/**
 * Calls `emit(start, end, special)` for each piece; `special` is the SPECIAL_TOKENS index or
 * -1. The one scanner behind encode and countTokens, so they can never disagree.
 */
function scan(text: string, emit: (start: number, end: number, special: number) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === LT) {
      const s = matchSpecial(text, i);
      if (s >= 0) {
        emit(i, i + SPECIAL_TOKENS[s].length, s);
        i += SPECIAL_TOKENS[s].length;
        continue;
      }
    }
    const ledBySpace = c === SPACE && i + 1 < n && isLetter(text.charCodeAt(i + 1));
    if (ledBySpace || isLetter(c)) {
      let chunkStart = i;
      let j = ledBySpace ? i + 1 : i;
      let letters = 0;
      while (j < n && isLetter(text.charCodeAt(j))) {
        if (letters === MAX_LETTERS_PER_PIECE) {
          emit(chunkStart, j, -1);
          chunkStart = j;
          letters = 0;
        }
        letters++;
        j++;
      }
      emit(chunkStart, j, -1);
      i = j;
      continue;
    }
    const width = isHighSurrogate(c) && i + 1 < n ? 2 : 1;
    emit(i, i + width, -1);
    i += width;
  }
}

export function encode(text: string): number[] {
  const ids: number[] = [];
  scan(text, (start, end, special) => {
    ids.push(special >= 0 ? VOCAB_SIZE + special : pieceId(text, start, end));
  });
  return ids;
}

/** The text of each token `encode(text)` yields, in order: they join back to `text`. */
export function tokenTexts(text: string): string[] {
  const pieces: string[] = [];
  scan(text, (start, end) => {
    pieces.push(text.slice(start, end));
  });
  return pieces;
}

export function countTokens(text: string): number {
  let count = 0;
  scan(text, () => {
    count++;
  });
  return count;
}

/**
 * Text of ids this tokenizer produced. Word pieces and specials always decode; other ids
 * decode to the text last encoded to them in this process (a hash collision yields the first
 * text seen); ids never produced decode to "".
 */
export function decode(ids: readonly number[]): string {
  let out = "";
  for (const id of ids) out += decodeToken(id);
  return out;
}

export function decodeToken(id: number): string {
  if (id >= 0 && id < WORD_PIECES.length) return WORD_PIECES[id];
  if (id >= VOCAB_SIZE) return SPECIAL_TOKENS[id - VOCAB_SIZE] ?? "";
  return remembered.get(id) ?? "";
}

/** xorshift-multiply step; a tiny seeded PRNG so text is reproducible from a seed. */
function nextRandom(state: number): number {
  let x = state ^ (state >>> 15);
  x = Math.imul(x, 0x2c1b3c6d);
  x ^= x >>> 12;
  x = Math.imul(x, 0x297a2d39);
  return (x ^ (x >>> 15)) >>> 0;
}

/** Entries of WORD_PIECES that are words (the rest is punctuation and newline). */
const FIRST_WORD = WORD_PIECES.findIndex((p) => p.charCodeAt(0) === SPACE);
/** One draw in PUNCTUATION_EVERY picks punctuation, so long texts read like sentences. */
const PUNCTUATION_EVERY = 12;

/**
 * Map a 32-bit random draw to a word-piece id: mostly words, sometimes punctuation. Engine
 * output and `textOfTokens` both draw through here, so generated text looks alike.
 */
export function drawWordPieceId(draw: number, allowPunctuation = true): number {
  if (allowPunctuation && draw % PUNCTUATION_EVERY === 0) return (draw >>> 8) % FIRST_WORD;
  return FIRST_WORD + ((draw >>> 8) % (WORD_PIECES.length - FIRST_WORD));
}

/**
 * Text of exactly `n` tokens (encode(textOfTokens(n, seed)).length === n), distinct per seed.
 * It starts with a space-led word, so it can be appended to any text without merging.
 */
export function textOfTokens(n: number, seed: number): string {
  let state = (seed ^ 0x9e3779b9) >>> 0;
  let text = "";
  for (let k = 0; k < n; k++) {
    state = nextRandom(state + k);
    text += WORD_PIECES[drawWordPieceId(state, k > 0)];
  }
  return text;
}
