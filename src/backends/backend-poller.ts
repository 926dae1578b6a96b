/**
 * Polls the backends' metrics. Each backend's poll runs on its own, with its own timeout on the
 * runtime's clock, so a slow or frozen backend never holds up another's figures:
 *   - a round starts one poll of every backend, even one whose previous poll is still out (a
 *     frozen backend then fails once per round, each poll at its own timeout, and is found
 *     unhealthy after as many rounds as the failure threshold, not after that many timeouts
 *     back to back);
 *   - the round resolves with the results that came in within its wait; a result that comes
 *     later is handed to `onLate`, unless a newer poll of that backend was already delivered
 *     (an old figure never overwrites a newer one);
 *   - at most `concurrency` polls are on the wire at once (p-queue); a poll's timeout runs from
 *     when it goes on the wire.
 * It also keeps the latest good sample per backend for `/backends` and Prometheus ("as last
 * seen").
 */
import PQueue from "p-queue";
import type { BackendMetricsSample } from "../core/events.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../util/logger.ts";
import type { BackendMetricsClient } from "./metrics-client.ts";

export interface LatestSample {
  sample: BackendMetricsSample;
  at: number;
}

/** Per backend: a sample, or null for a failed poll; a backend still being polled is absent. */
export type PollResults = Record<string, BackendMetricsSample | null>;

export interface BackendPoller {
  /**
   * Poll every backend. Resolves with what answered within `waitMs` (every backend, when all
   * answer sooner). With `onLate`, a later answer is delivered there; rounds without it only
   * refresh `latest`.
   */
  pollRound(
    waitMs: number,
    onLate?: (backendId: string, result: BackendMetricsSample | null) => void,
  ): Promise<PollResults>;
  latest(backendId: string): LatestSample | undefined;
  /** Abort every poll still out; nothing is delivered after this. */
  close(): void;
}

export interface BackendPollerOptions {
  clients: readonly BackendMetricsClient[];
  concurrency: number;
  timeoutMs: number;
  clock: Clock;
  logger: Logger;
}

export function createBackendPoller(options: BackendPollerOptions): BackendPoller {
  const { clock, logger, timeoutMs } = options;
  const queue = new PQueue({ concurrency: options.concurrency });
  const latest = new Map<string, LatestSample & { seq: number }>();
  /** Per backend: polls are numbered as they start; the newest delivered so far. */
  const started = new Map<string, number>();
  const delivered = new Map<string, number>();
  const out = new Set<AbortController>();
  /** The rounds not yet resolved, each by its `finish`. */
  const rounds = new Set<() => void>();
  let closed = false;

  async function pollOne(
    client: BackendMetricsClient,
    seq: number,
  ): Promise<BackendMetricsSample | null> {
    if (closed) return null;
    const abort = new AbortController();
    out.add(abort);
    const timer = clock.setTimeout(
      () => abort.abort(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      const sample = await client.poll(abort.signal);
      const prev = latest.get(client.backendId);
      if (prev === undefined || prev.seq < seq)
        latest.set(client.backendId, { sample, at: clock.now(), seq });
      return sample;
    } catch (err) {
      if (!closed) logger.warn("backend metrics poll failed", { backend: client.backendId, err });
      return null;
    } finally {
      timer.cancel();
      out.delete(abort);
    }
  }

  return {
    pollRound(waitMs, onLate) {
      const results: PollResults = {};
      let pending = options.clients.length;
      let roundOver = false;
      return new Promise<PollResults>((resolve) => {
        const finish = () => {
          if (roundOver) return;
          roundOver = true;
          wait.cancel();
          rounds.delete(finish);
          resolve(results);
        };
        rounds.add(finish);
        const wait = clock.setTimeout(finish, waitMs);
        if (pending === 0) finish();
        for (const client of options.clients) {
          const id = client.backendId;
          const seq = (started.get(id) ?? 0) + 1;
          started.set(id, seq);
          void (queue.add(() => pollOne(client, seq)) as Promise<BackendMetricsSample | null>).then(
            (result) => {
              pending--;
              if (closed) return;
              if (onLate) {
                // A newer poll of this backend already reached the core: this one is history.
                if (seq < (delivered.get(id) ?? 0)) return;
                delivered.set(id, seq);
              }
              if (!roundOver) results[id] = result;
              else onLate?.(id, result);
              if (pending === 0) finish();
            },
          );
        }
      });
    },
    latest(id) {
      const l = latest.get(id);
      return l === undefined ? undefined : { sample: l.sample, at: l.at };
    },
    close() {
      closed = true;
      queue.clear();
      for (const abort of out) abort.abort(new Error("poller closed"));
      for (const finish of [...rounds]) finish();
    },
  };
}
