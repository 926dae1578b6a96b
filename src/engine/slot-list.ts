/**
 * An intrusive doubly linked list of slots `0 … n − 1` over typed arrays, the order both block
 * pools keep (the GPU pool's free queue, the host pool's LRU list): append, unlink and move to
 * the tail in O(1), with no allocation. Slot `n` is the sentinel: `head()` is the first slot,
 * `tail()` the last, and either is `END` when the list is empty.
 */

export interface SlotList {
  /** The sentinel: what `head`, `tail` and `next` return past the ends. */
  readonly END: number;
  head(): number;
  tail(): number;
  next(slot: number): number;
  /** Append a slot that is not in the list. */
  pushTail(slot: number): void;
  /** Remove a slot that is in the list. */
  unlink(slot: number): void;
}

export function createSlotList(n: number): SlotList {
  const END = n;
  const prev = new Int32Array(n + 1);
  const next = new Int32Array(n + 1);
  prev[END] = END;
  next[END] = END;
  return {
    END,
    head: () => next[END],
    tail: () => prev[END],
    next: (slot) => next[slot],
    pushTail(slot) {
      const last = prev[END];
      prev[slot] = last;
      next[slot] = END;
      next[last] = slot;
      prev[END] = slot;
    },
    unlink(slot) {
      next[prev[slot]] = next[slot];
      prev[next[slot]] = prev[slot];
    },
  };
}
