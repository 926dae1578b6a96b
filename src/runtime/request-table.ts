/**
 * The runtime's side of every request the core knows about: the grant the proxy awaits while
 * the request is parked, and the cancel hook maitred uses once it is in flight. The core's
 * Effects land here (via the run loop); the proxy reads from here. This is llama-swap's
 * HandlerReq/respond pair (the HTTP handler hands the run loop a request, then blocks on an
 * unbuffered channel for the answer), with a promise the handler awaits in place of the channel.
 *
 * Hot path: most requests are dispatched while the core handles their arrival, so the grant
 * promise is only created when someone actually waits, and cancellation is a plain callback
 * rather than an AbortController per request.
 */
import type { MaitredError } from "../errors.ts";

export interface Grant {
  backendId: string;
  /** How long the request was held before dispatch (`x-maitred-paused-ms`). */
  pausedMs: number;
  /**
   * Its `priority` for an engine that schedules by priority, in that engine's polarity; null =
   * the backend takes none and the body goes as the client sent it.
   */
  priority: number | null;
}

export type PendingStatus = "waiting" | "dispatched" | "rejected";

export interface PendingRequest {
  readonly id: string;
  readonly status: PendingStatus;
  /** The grant once dispatched. */
  readonly grant: Grant | null;
  /** Resolves on dispatch, rejects with the core's MaitredError on reject. */
  readonly granted: Promise<Grant>;
  /** Set when maitred cancelled the request (core `cancel`). */
  readonly cancelReason: MaitredError | null;
  /** Called once if the request is cancelled while in flight; null to stop listening. */
  onCancel: ((reason: MaitredError) => void) | null;
}

class Entry implements PendingRequest {
  readonly id: string;
  status: PendingStatus = "waiting";
  grant: Grant | null = null;
  error: MaitredError | null = null;
  cancelReason: MaitredError | null = null;
  onCancel: ((reason: MaitredError) => void) | null = null;
  #promise: Promise<Grant> | null = null;
  #resolve: ((g: Grant) => void) | null = null;
  #reject: ((e: MaitredError) => void) | null = null;

  constructor(id: string) {
    this.id = id;
  }

  get granted(): Promise<Grant> {
    if (this.#promise) return this.#promise;
    if (this.status === "dispatched") this.#promise = Promise.resolve(this.grant as Grant);
    else if (this.status === "rejected") this.#promise = Promise.reject(this.error);
    else {
      this.#promise = new Promise<Grant>((resolve, reject) => {
        this.#resolve = resolve;
        this.#reject = reject;
      });
    }
    // A rejection nobody awaits (the client left first) must not become an unhandled one.
    this.#promise.catch(() => {});
    return this.#promise;
  }

  settle(grant: Grant | null, error: MaitredError | null): void {
    if (grant) {
      this.status = "dispatched";
      this.grant = grant;
      this.#resolve?.(grant);
    } else {
      this.status = "rejected";
      this.error = error;
      this.#reject?.(error as MaitredError);
    }
    this.#resolve = null;
    this.#reject = null;
  }
}

export interface RequestTable {
  /** Register a request before the core hears of it. Ids must be unique. */
  open(id: string): PendingRequest;
  get(id: string): PendingRequest | undefined;
  /** Core `dispatch`: false when the request is unknown (already finished) or not waiting. */
  dispatch(id: string, grant: Grant): boolean;
  /** Core `reject`: false when unknown or already dispatched. */
  reject(id: string, error: MaitredError): boolean;
  /** Core `cancel`: cancels an in-flight request (or rejects a waiting one). */
  cancel(id: string, error: MaitredError): boolean;
  /** Forget a finished request. */
  close(id: string): void;
  readonly size: number;
  ids(): IterableIterator<string>;
}

export function createRequestTable(): RequestTable {
  const entries = new Map<string, Entry>();
  const reject = (id: string, error: MaitredError) => {
    const e = entries.get(id);
    if (e?.status !== "waiting") return false;
    e.settle(null, error);
    return true;
  };
  return {
    open(id) {
      if (entries.has(id)) throw new Error(`request id ${id} already open`);
      const entry = new Entry(id);
      entries.set(id, entry);
      return entry;
    },
    get: (id) => entries.get(id),
    dispatch(id, grant) {
      const e = entries.get(id);
      if (e?.status !== "waiting") return false;
      e.settle(grant, null);
      return true;
    },
    reject,
    cancel(id, error) {
      const e = entries.get(id);
      if (!e) return false;
      if (e.status === "waiting") return reject(id, error);
      if (e.cancelReason === null) {
        e.cancelReason = error;
        const hook = e.onCancel;
        e.onCancel = null;
        hook?.(error);
      }
      return true;
    },
    close(id) {
      entries.delete(id);
    },
    get size() {
      return entries.size;
    },
    ids: () => entries.keys(),
  };
}
