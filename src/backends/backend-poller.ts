/**
 * Polls the backends' metrics. Each backend's poll runs on its own, with its own timeout on the
 * runtime's clock, so a slow or frozen backend never holds up another's figures. The rules:
 *   - one poll per backend at a time: a round polls each backend that has no poll out, and
 *     waits for the answers at most `waitMs`;
 *   - a counted round (the scheduler's) reports, per backend, at most one result: the answer
 *     that came within its wait, or null when the backend has been silent: its poll has been on
 *     the wire longer than a round's wait and did not answer within this one, or a poll of it
 *     failed after the previous round had ended. A backend that stays silent therefore fails
 *     once per round, however its polls time out;
 *   - a good answer that comes after its round ended reaches the core at once (`onLate`): it is
 *     the freshest figure there is;
 *   - at most `concurrency` polls are on the wire at once (p-queue); a poll's timeout and its
 *     silence run from when it goes on the wire, so waiting for a turn in the queue is never
 *     held against a backend;
 *   - uncounted rounds (the `--metrics` refresh) only refresh `latest`, the last good sample per
 *     backend for `/backends` and Prometheus ("as last seen");
 *   - the log hears of a backend's metrics when they stop answering (one warning line, the
 *     error's message without its stack) and when they answer again (one info line with how
 *     long they were out); the failures in between go to the debug level, so a backend that
 *     stays down for an hour does not write a line every poll.
 */
import PQueue from "p-queue";
import type { BackendMetricsSample } from "../core/events.ts";
import type { Clock } from "../runtime/clock.ts";
import { errorLine } from "../util/error-line.ts";
import type { Logger } from "../util/logger.ts";
import type { BackendMetricsClient } from "./metrics-client.ts";

export interface LatestSample {
  sample: BackendMetricsSample;
  at: number;
}

/** Per backend: a sample, or null for a failed or silent one; a backend with no news is absent. */
export type PollResults = Record<string, BackendMetricsSample | null>;

export interface BackendPoller {
  /**
   * Poll every backend that has no poll out; resolve with what a counted round reports (see
   * above) within `waitMs`, or at once when every backend it waits for has answered.
   */
  pollRound(waitMs: number, counted: boolean): Promise<PollResults>;
  latest(backendId: string): LatestSample | undefined;
  /**
   * Abort every poll still out and end the open rounds with what they have; nothing is handed
   * to `onLate` after this.
   */
  close(): void;
}

export interface BackendPollerOptions {
  clients: readonly BackendMetricsClient[];
  concurrency: number;
  timeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** A good answer that came after its counted round ended. */
  onLate?(backendId: string, sample: BackendMetricsSample): void;
}

/** One poll of one backend. */
interface Poll {
  /** When it went on the wire; null while it waits for its turn. */
  wireAt: number | null;
  /** A counted round wants its answer (it was started by one, or one found it out). */
  counted: boolean;
  /** The open counted round that takes its answer, if any. */
  round: Round | null;
}

interface Round {
  results: PollResults;
  /** Backends whose answer it waits for. */
  waiting: Set<string>;
  finish(): void;
  open: boolean;
}

export function createBackendPoller(options: BackendPollerOptions): BackendPoller {
  const { clock, logger, timeoutMs } = options;
  const queue = new PQueue({ concurrency: options.concurrency });
  const latest = new Map<string, LatestSample>();
  const out = new Map<string, Poll>();
  /** Backends a poll of which failed after its counted round had ended: the next one says so. */
  const failedUnreported = new Set<string>();
  /** Backends whose last poll failed, with when the first failure of the run was seen. */
  const down = new Map<string, number>();
  const aborts = new Set<AbortController>();
  const rounds = new Set<Round>();
  let closed = false;

  async function run(client: BackendMetricsClient, poll: Poll): Promise<void> {
    const id = client.backendId;
    let result: BackendMetricsSample | null = null;
    if (!closed) {
      poll.wireAt = clock.now();
      const abort = new AbortController();
      aborts.add(abort);
      const timer = clock.setTimeout(
        () => abort.abort(new Error(`no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      try {
        result = await client.poll(abort.signal);
        latest.set(id, { sample: result, at: clock.now() });
        const since = down.get(id);
        if (since !== undefined) {
          down.delete(id);
          logger.info("backend metrics answer again", { backend: id, outMs: clock.now() - since });
        }
      } catch (err) {
        if (!closed) {
          const error = errorLine(err);
          if (down.has(id)) logger.debug("backend metrics poll failed", { backend: id, error });
          else {
            down.set(id, clock.now());
            logger.warn("backend metrics poll failed; said again when it answers", {
              backend: id,
              error,
            });
          }
        }
      } finally {
        timer.cancel();
        aborts.delete(abort);
      }
    }
    out.delete(id);
    if (closed || !poll.counted) return;
    const round = poll.round;
    if (round?.open) {
      round.results[id] = result;
      round.waiting.delete(id);
      if (round.waiting.size === 0) round.finish();
    } else if (result !== null) options.onLate?.(id, result);
    else failedUnreported.add(id);
  }

  function start(client: BackendMetricsClient, counted: boolean): Poll {
    const poll: Poll = { wireAt: null, counted, round: null };
    out.set(client.backendId, poll);
    void queue.add(() => run(client, poll));
    return poll;
  }

  return {
    pollRound(waitMs, counted) {
      return new Promise<PollResults>((resolve) => {
        const round: Round = {
          results: {},
          waiting: new Set(),
          open: true,
          finish() {
            if (!round.open) return;
            round.open = false;
            wait.cancel();
            rounds.delete(round);
            resolve(round.results);
          },
        };
        rounds.add(round);
        const wait = clock.setTimeout(() => round.finish(), waitMs);
        const now = clock.now();
        for (const client of options.clients) {
          const id = client.backendId;
          const busy = out.get(id);
          if (!counted) {
            if (busy === undefined) start(client, false);
            continue;
          }
          if (failedUnreported.delete(id)) round.results[id] = null;
          const poll = busy ?? start(client, true);
          poll.counted = true;
          poll.round = round;
          // Silent: on the wire for longer than a round waits. Its answer, if it comes within
          // this round, replaces the null.
          if (poll.wireAt !== null && now - poll.wireAt >= waitMs) round.results[id] = null;
          else round.waiting.add(id);
        }
        if (round.waiting.size === 0) round.finish();
      });
    },
    latest: (id) => latest.get(id),
    close() {
      closed = true;
      queue.clear();
      for (const abort of aborts) abort.abort(new Error("poller closed"));
      for (const round of [...rounds]) round.finish();
    },
  };
}
