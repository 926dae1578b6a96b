/**
 * Polls the backends' metrics. Each backend's poll runs on its own, with its own timeout on the
 * runtime's clock, so a slow or frozen backend never holds up another's figures:
 *   - a round starts one poll of every backend and resolves with the answers that came in
 *     within its wait; an answer that comes later is handed to `onLate`;
 *   - a backend whose poll from an earlier round is still on the wire gets no second one: the
 *     round counts it as failed at once (an engine that cannot answer `/metrics` within a round
 *     is not one to place work on). A frozen backend therefore fails once per round, and its
 *     polls never pile up;
 *   - at most `concurrency` polls are on the wire at once (p-queue); a poll's timeout runs from
 *     when it goes on the wire, and a backend whose poll is still waiting in the queue is left
 *     out of the round, so waiting for a turn is never held against a backend.
 * Rounds without `onLate` (the `--metrics` refresh) only refresh `latest`, the last good
 * sample per backend for `/backends` and Prometheus ("as last seen"), and are not counted.
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
  /**
   * Abort every poll still out and end the open rounds with what they have; no answer is
   * delivered to `onLate` after this.
   */
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
  /** Per backend: polls are numbered as they start, so an old answer never replaces a newer. */
  const started = new Map<string, number>();
  /** Backends whose counted poll (a round with `onLate`) has not answered yet, and where it is. */
  const counting = new Map<string, "queued" | "wire">();
  const out = new Set<AbortController>();
  /** The rounds not yet resolved, each by its `finish`. */
  const rounds = new Set<() => void>();
  let closed = false;

  async function pollOne(
    client: BackendMetricsClient,
    seq: number,
    counted: boolean,
  ): Promise<BackendMetricsSample | null> {
    if (closed) return null;
    if (counted) counting.set(client.backendId, "wire");
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
      let pending = 0;
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
        for (const client of options.clients) {
          const id = client.backendId;
          const previous = onLate ? counting.get(id) : undefined;
          if (previous === "wire") results[id] = null; // still silent since the last round
          if (previous !== undefined) continue;
          const seq = (started.get(id) ?? 0) + 1;
          started.set(id, seq);
          if (onLate) counting.set(id, "queued");
          pending++;
          void (
            queue.add(() =>
              pollOne(client, seq, onLate !== undefined),
            ) as Promise<BackendMetricsSample | null>
          ).then((result) => {
            pending--;
            if (onLate) counting.delete(id);
            if (closed) return;
            if (!roundOver) results[id] = result;
            else onLate?.(id, result);
            if (pending === 0) finish();
          });
        }
        if (pending === 0) finish();
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
