import type { BackendSpec, Scheduler, SchedulerConfig } from "../core/api.ts";
import type { Effects } from "../core/effects.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import { DEFAULT_PRIORITY_CLASS, type PriorityClass } from "../core/priority/priority-classes.ts";
import { createScheduler } from "../core/scheduler.ts";
import type { SimulatedEngine } from "../engine/engine.ts";
import { priorityPolarity } from "../engine/queue-order.ts";
import type { RequestOutput } from "../engine/types.ts";
import { attachEngine, type EventKernel, type VirtualEngine } from "../engine/virtual-driver.ts";
import { Errors, MaitredError } from "../errors.ts";
import { createRequestFlow, type RequestFlow } from "../runtime/request-flow.ts";
import { createRunLoop, type RunLoop } from "../runtime/run-loop.ts";
import type { Logger } from "../util/logger.ts";
import { metricsSample } from "./engine-probe.ts";
import type { RequestResult, SimRequest } from "./sim-request.ts";

/**
 * The simulator runtime: maitred's real scheduler core (src/core/scheduler.ts, the very code
 * `maitred serve` runs) driven in virtual time, with in-process engines where the HTTP runtime
 * has sockets. No scheduling rule lives here; this file
 * only translates:
 *
 *   core Effects → engines:  dispatch → submit the prompt to that backend's engine;
 *                            reject → the request's owner hears the error;
 *                            cancel → engine abort, then `request_finished(cancelled)`.
 *   engine outputs → core:   through the request flow the HTTP proxy uses too
 *                            (src/runtime/request-flow.ts): the first-byte commit, first
 *                            token, progress, then usage (cached tokens included) and
 *                            `request_finished(ok)`.
 *   tick():                  every engine's stats() → one metrics sample each → `tick`.
 *
 * Events go through the HTTP runtime's own run loop (src/runtime/run-loop.ts): one writer,
 * effects applied after the core returns, events they cause queued, so the core is never
 * re-entered and both runtimes feed it the same way.
 */

export type { RequestResult, SimRequest } from "./sim-request.ts";

export interface SimBackend {
  id: string;
  engine: SimulatedEngine;
  virtual: VirtualEngine;
}

export interface SimRuntime {
  readonly kernel: EventKernel;
  readonly scheduler: Scheduler;
  /** The run loop that feeds the core (observers add their hooks to it: the shadow). */
  readonly loop: RunLoop;
  readonly backends: readonly SimBackend[];
  nowMs(): number;
  /** A program sends a request (`request_arrived`). */
  submit(request: SimRequest): void;
  /** A program ended (`program_release`). */
  release(programId: string): void;
  /** Sample every engine and send one `tick`; returns the samples by backend id. */
  tick(): Record<string, BackendMetricsSample>;
  /**
   * A tick without samples at a deadline of the core (`atMs`, its own number, so that the
   * seconds ↔ ms round trip of the clock cannot land a hair before it).
   */
  deadlineTick(atMs: number): void;
  /** Requests the runtime tracks (parked or in flight). */
  readonly liveRequests: number;
  /**
   * The longest wait so far of the requests not dispatched yet, by class (`default` when the
   * program asked for none): what a wait measured at dispatch cannot show for a request that
   * is still parked when the run ends.
   */
  waitingByClass(): Partial<Record<PriorityClass, number>>;
}

export interface SimRuntimeOptions {
  kernel: EventKernel;
  engines: readonly SimulatedEngine[];
  config: SchedulerConfig;
  /** Decision logs of the core (pause, resume, ...); dropped when absent. */
  onLog?: Effects["log"];
  /**
   * What-if seam for benchmarks: change what the core is shown of each engine (the series
   * still record engine truth). Default: the sample as the metrics clients would read it.
   */
  shapeSample?(sample: BackendMetricsSample): BackendMetricsSample;
}

interface Live {
  request: SimRequest;
  backend: number;
  pausedMs: number;
  output: number[];
  submittedMs: number;
  flow: RequestFlow;
}

const MS_PER_S = 1000;

export function createSimRuntime(options: SimRuntimeOptions): SimRuntime {
  const { kernel, config } = options;
  const live = new Map<string, Live>();
  // The core gets whole milliseconds, as from a wall clock: a fractional virtual time can miss
  // a deadline the core computed as `parkedAt + maxPause` by one rounding step.
  const nowMs = () => Math.round(kernel.now * MS_PER_S);

  // An engine that schedules by priority is declared so to the core, as an operator declares
  // one with --engine-priority: the simulator knows its engines.
  const specs: BackendSpec[] = options.engines.map((engine, i) => {
    const p = engine.config.priorityScheduling;
    return {
      id: `sim-${i}`,
      type: "vllm",
      ...(p === undefined ? {} : { priorityScheduling: priorityPolarity(p) }),
    };
  });
  const loop = createRunLoop({
    createScheduler: (effects) => createScheduler({ config, backends: specs, effects }),
    logger: logTo(options.onLog),
    hooks: {
      onDispatch: (id, grant) => dispatch(id, grant.backendId, grant.pausedMs, grant.priority),
      // As over HTTP, a refused request still ends with `request_finished`: a request the
      // core cancelled while it waited is only forgotten then.
      onReject: (id, error) => {
        live.get(id)?.flow.finish(nowMs(), "cancelled");
        finish(id, { ok: false, error });
      },
    },
    // A core error is a bug the simulation must not hide: it ends the run.
    onSchedulerError: (_event, err) => {
      throw err;
    },
  });
  const { scheduler } = loop;
  const send = loop.send;
  const indexById = new Map(specs.map((s, i) => [s.id, i]));
  const backends: SimBackend[] = options.engines.map((engine, i) => ({
    id: specs[i].id,
    engine,
    virtual: attachEngine(kernel, engine, { onOutput: (o) => onOutput(i, o) }),
  }));

  function finish(id: string, result: RequestResult): void {
    const l = live.get(id);
    if (l === undefined) return;
    live.delete(id);
    loop.requests.close(id);
    l.request.onDone(result);
  }

  function dispatch(
    id: string,
    backendId: string,
    pausedMs: number,
    priority: number | null,
  ): void {
    const l = live.get(id);
    const index = indexById.get(backendId);
    if (l === undefined || index === undefined) return;
    l.backend = index;
    l.pausedMs = pausedMs;
    const pending = loop.requests.get(id);
    if (pending !== undefined) pending.onCancel = (error) => cancel(id, error);
    try {
      backends[index].virtual.submit({
        id,
        promptTokens: l.request.tokens,
        maxTokens: l.request.maxTokens,
        minTokens: 0,
        // Trace replay asks for exactly the recorded output.
        ignoreEos: true,
        ...(priority === null ? {} : { priority }),
      });
    } catch (err) {
      // The engine refuses what vLLM answers 400 (e.g. a prompt over max_model_len).
      l.flow.finish(nowMs(), "upstream_error");
      finish(id, { ok: false, error: asMaitredError(err) });
    }
  }

  function cancel(id: string, error: MaitredError): void {
    const l = live.get(id);
    if (l === undefined) return;
    if (l.backend >= 0) backends[l.backend].virtual.abort(id);
    l.flow.finish(nowMs(), "cancelled");
    finish(id, { ok: false, error });
  }

  function onOutput(backend: number, o: RequestOutput): void {
    const l = live.get(o.id);
    // Outputs of a request aborted during the same step are stale.
    if (l === undefined || l.backend !== backend) return;
    const now = nowMs();
    const n = o.completionTokens;
    const previous = n - o.newTokenIds.length;
    // The first byte to the client is committed first, as the HTTP relay does, so a request is
    // either preempted or delivered, never both. Effects run synchronously here, so a
    // preempted request has already left `live`; false would mean "deliver nothing".
    if (previous === 0 && !l.flow.commit()) return;
    l.flow.tokens(now, n, previous);
    for (const t of o.newTokenIds) l.output.push(t);
    if (o.finishReason === undefined) return;
    l.flow.usage = {
      promptTokens: o.promptTokens,
      completionTokens: n,
      totalTokens: o.promptTokens + n,
      cachedTokens: o.numCachedTokens,
    };
    // The engine ran to the length the workload asked for; how the answer ends is the
    // workload's (a final or text answer, or a tool call).
    l.flow.stopped = l.request.answerStops === true;
    l.flow.finish(now, "ok");
    finish(o.id, {
      ok: true,
      promptTokens: o.promptTokens,
      cachedTokens: o.numCachedTokens,
      completionTokens: n,
      outputIds: l.output,
      pausedMs: l.pausedMs,
      firstTokenMs: l.flow.firstTokenAt ?? undefined,
    });
  }

  return {
    kernel,
    scheduler,
    loop,
    backends,
    nowMs,
    submit(request) {
      loop.requests.open(request.id);
      live.set(request.id, {
        request,
        backend: -1,
        pausedMs: 0,
        output: [],
        submittedMs: nowMs(),
        flow: createRequestFlow(loop, request.id, config.progressIntervalTokens),
      });
      send({
        kind: "request_arrived",
        now: nowMs(),
        requestId: request.id,
        programId: request.programId,
        ...(request.parentProgramId === undefined
          ? {}
          : { parentProgramId: request.parentProgramId }),
        messageChars: request.messageChars,
        final: false,
        // Classes come from the workload, already valid: nothing to resolve or clamp.
        ...(request.priorityClass === undefined ? {} : { priorityClass: request.priorityClass }),
      });
    },
    release(programId) {
      send({ kind: "program_release", now: nowMs(), programId });
    },
    tick() {
      const truth: Record<string, BackendMetricsSample> = {};
      const shown: Record<string, BackendMetricsSample> = {};
      for (const b of backends) {
        truth[b.id] = metricsSample(b.engine);
        shown[b.id] = options.shapeSample ? options.shapeSample(truth[b.id]) : truth[b.id];
      }
      send({ kind: "tick", now: nowMs(), metrics: shown });
      return truth;
    },
    deadlineTick(atMs) {
      send({ kind: "tick", now: Math.max(nowMs(), atMs), metrics: {} });
    },
    get liveRequests() {
      return live.size;
    },
    waitingByClass() {
      const now = nowMs();
      const out: Partial<Record<PriorityClass, number>> = {};
      for (const l of live.values()) {
        if (l.backend >= 0) continue;
        const cls = l.request.priorityClass ?? DEFAULT_PRIORITY_CLASS;
        out[cls] = Math.max(out[cls] ?? 0, now - l.submittedMs);
      }
      return out;
    },
  };
}

/** The core's decision logs, to `onLog` (or nowhere). */
function logTo(onLog: Effects["log"] | undefined): Logger {
  const at =
    (level: "debug" | "info" | "warn" | "error") =>
    (msg: string, fields?: Record<string, unknown>) =>
      onLog?.(level, msg, fields);
  const logger: Logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: () => logger,
  };
  return logger;
}

function asMaitredError(err: unknown): MaitredError {
  return err instanceof MaitredError ? err : Errors.internal("Engine refused the request", err);
}
