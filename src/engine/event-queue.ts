/**
 * A binary min-heap of timed callbacks ordered by (time, insertion sequence): equal times run
 * in the order they were scheduled, which makes every simulation run reproducible.
 */

export interface TimedEvent {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

const before = (a: TimedEvent, b: TimedEvent) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export interface EventQueue {
  readonly size: number;
  push(event: TimedEvent): void;
  peek(): TimedEvent | undefined;
  pop(): TimedEvent | undefined;
}

export function createEventQueue(): EventQueue {
  const heap: TimedEvent[] = [];

  const siftUp = (i: number) => {
    const e = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(e, heap[parent])) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = e;
  };

  const siftDown = (i: number) => {
    const n = heap.length;
    const e = heap[i];
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right], heap[left]) ? right : left;
      if (!before(heap[child], e)) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = e;
  };

  return {
    get size() {
      return heap.length;
    },
    push(event) {
      heap.push(event);
      siftUp(heap.length - 1);
    },
    peek: () => heap[0],
    pop() {
      const top = heap[0];
      const last = heap.pop();
      if (heap.length > 0 && last !== undefined) {
        heap[0] = last;
        siftDown(0);
      }
      return top;
    },
  };
}
