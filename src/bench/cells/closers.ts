/**
 * What `npm run bench:cells` has started and must stop (processes, HAProxy, stub servers,
 * temporary directories), so that the end of a run, an error or Ctrl-C stops all of it,
 * each thing once.
 */

export interface Closers {
  /** Registers a closer; the returned function closes once (its error ignored) and forgets it. */
  own(close: () => Promise<void>): () => Promise<void>;
  /** Closes everything still registered. */
  closeAll(): Promise<void>;
}

export function createClosers(): Closers {
  const live = new Set<() => Promise<void>>();
  return {
    own(close) {
      let done: Promise<void> | null = null;
      const once = () => {
        if (done === null) {
          live.delete(once);
          done = close().catch(() => {});
        }
        return done;
      };
      live.add(once);
      return once;
    },
    async closeAll() {
      await Promise.all([...live].map((c) => c()));
    },
  };
}
