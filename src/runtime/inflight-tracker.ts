/**
 * Counts requests between arrival and their final `request_finished`, so shutdown can wait for
 * in-flight streams to end (task: "let in-flight streams finish, bounded") without polling.
 */
export interface InflightTracker {
  /** Mark one request started; call the returned function exactly once when it ends. */
  begin(): () => void;
  readonly size: number;
  /** Resolves when no request is in flight (immediately if none is). */
  whenIdle(): Promise<void>;
}

export function createInflightTracker(): InflightTracker {
  let size = 0;
  let waiters: Array<() => void> = [];
  return {
    begin() {
      size++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        size--;
        if (size === 0 && waiters.length > 0) {
          const ws = waiters;
          waiters = [];
          for (const w of ws) w();
        }
      };
    },
    get size() {
      return size;
    },
    whenIdle() {
      if (size === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
