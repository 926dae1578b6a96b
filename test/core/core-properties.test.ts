import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type {
  BackendSpec,
  BackendView,
  CoreScheduler,
  PriorityClass,
  SchedulerConfig,
  SchedulerSnapshot,
} from "../../src/core/api.ts";
import type { Effects } from "../../src/core/effects.ts";
import type { BackendMetricsSample, RequestOutcome } from "../../src/core/events.ts";
import { createScheduler, DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { ENGINE_ORDER_NAMES, TAIL_NAMES, TAIL_PRESETS } from "../../src/core/scheduler-config.ts";

/**
 * The core's invariants under random event sequences, on the shipped defaults (learned
 * headroom, ageing, lending as shipped), with priorities off and on. After every event:
 *   - books: every incremental sum equals a recount from the records (`audit()`), and no
 *     token sum or count is negative;
 *   - ends: a request is rejected at most once, dispatched at most once, never both; after
 *     the final drain every request has ended exactly once;
 *   - W (work conservation): after a tick, no request is held while a healthy backend with a
 *     known capacity (or, without one, a waiting gauge in its sample) runs nothing (by the
 *     requests handed to it and not ended) and either has no program at all or the engine's
 *     sample of that tick shows nothing running or waiting;
 *   - B (bounded admission, tr only): a backend that took a program in the event is over its
 *     admission capacity (its GPU's KV, or where a pause costs a transfer from its host tier,
 *     what GPU and tier hold together), its marked programs aside, by less than the largest
 *     newcomer's need;
 *   - P (pins): a request pinned to a backend (the one storing the response it continues) is
 *     dispatched to that backend only; one pinned to an unknown backend is rejected;
 *   - T (the price of a pause): a backend's admission capacity is its GPU's KV unless its
 *     engine's last sample reported a host tier of known size and the tier is not packed under
 *     the GPU (`tierPacking: "gpu"`, the throughput preset's), and never more than the larger
 *     of the two;
 *   - O (the engine's order): b0 is not declared to schedule by priority and never gets a
 *     priority value; b1 is (higher values first) and gets a whole number with every request.
 *     Read lower-first, a request never goes before one that reached the router more than the
 *     tail bound (the ageing bound in force) before it, whichever order is configured: nothing
 *     waits in the engine behind later arrivals longer than it could be held in the router.
 * Engine truth is random: failed polls, missing gauges, waiting, rising preemption counters.
 * A failure prints fast-check's seed and path; `FC_SEED=<seed> FC_PATH=<path>` replays it
 * (`FC_RUNS` sets the number of runs).
 */

const BACKENDS = ["b0", "b1"];
const CAPACITY = 20_000;
const PROGRAMS = ["p0", "p1", "p2", "p3", "p4", "p5"];
const CLASSES: PriorityClass[] = ["system", "interactive", "default", "bulk"];

type Command =
  | {
      kind: "arrive";
      program: number;
      tokens: number;
      cls: number;
      final: boolean;
      /** Index of the parent it names (-1 none): live, dead, itself or a descendant. */
      parent: number;
      /** A steps budget it asks for (0 none). */
      steps: number;
      /** Index of the backend it is pinned to (-1 none; BACKENDS.length: one not configured). */
      pin: number;
    }
  | { kind: "first"; pick: number }
  | { kind: "progress"; pick: number; tokens: number }
  | { kind: "usage"; pick: number; extra: number }
  | { kind: "finish"; pick: number; outcome: RequestOutcome; stopped: boolean }
  | { kind: "release"; program: number }
  | { kind: "failure"; backend: number; down: boolean }
  | { kind: "advance"; ms: number }
  | { kind: "tick"; samples: (SampleShape | null)[] };

interface SampleShape {
  capacityKnown: boolean;
  kv: number | null;
  running: number | null;
  waiting: number | null;
  preempt: number;
  /** Host KV tier: undefined = the engine does not say; null = a tier of unknown size. */
  hostKv: number | null | undefined;
}

const sampleArb: fc.Arbitrary<SampleShape | null> = fc.option(
  fc.record({
    capacityKnown: fc.constantFrom(true, true, true, true, true, true, true, true, true, false),
    kv: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { freq: 3 }),
    running: fc.option(fc.integer({ min: 0, max: 8 }), { freq: 3 }),
    waiting: fc.option(fc.constantFrom(0, 0, 0, 2), { freq: 3 }),
    preempt: fc.constantFrom(0, 0, 0, 1),
    // A host KV tier: none, of unknown size, too small, about what the programs need (the
    // price of a pause turns as they grow), or holding every context.
    hostKv: fc.constantFrom<number | null | undefined>(
      undefined,
      undefined,
      null,
      20_000,
      60_000,
      10_000_000,
    ),
  }),
  { freq: 6 },
);

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("arrive" as const),
      program: fc.integer({ min: -1, max: PROGRAMS.length - 1 }), // -1 = anonymous
      tokens: fc.integer({ min: 1, max: 12_000 }),
      cls: fc.integer({ min: 0, max: 3 }),
      final: fc.boolean(),
      parent: fc.integer({ min: -1, max: PROGRAMS.length - 1 }),
      steps: fc.constantFrom(0, 0, 0, 2, 5),
      pin: fc.constantFrom(-1, -1, -1, -1, 0, 1, 2),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("first" as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("progress" as const),
      pick: fc.nat(),
      tokens: fc.integer({ min: 0, max: 3000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("usage" as const),
      pick: fc.nat(),
      extra: fc.integer({ min: -2000, max: 4000 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("finish" as const),
      pick: fc.nat(),
      outcome: fc.constantFrom<RequestOutcome>("ok", "ok", "ok", "client_closed", "upstream_error"),
      // The answer ended with no tool call: the likely-done rule.
      stopped: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      program: fc.integer({ min: 0, max: PROGRAMS.length - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("failure" as const),
      backend: fc.integer({ min: 0, max: 1 }),
      // A refused or reset forward: the backend is out at once.
      down: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.constantFrom(100, 1000, 5000, 60_000, 400_000, 1_000_000),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("tick" as const),
      samples: fc.array(sampleArb, { minLength: 2, maxLength: 2 }),
    }),
  },
);

interface Tracked {
  rejected: number;
  dispatched: number;
  backend: string | null;
  ended: number;
  cancelled: number;
  program: string | null;
  /** The backend it must be served by; null = any. */
  pinned: string | null;
  /** When it arrived, and the priority its dispatch carried (undefined = not dispatched). */
  arrivedAt: number;
  priority: number | null | undefined;
}

const pinName = (pin: number) => (pin < 0 ? null : (BACKENDS[pin] ?? "gone"));

function run(commands: Command[], config: SchedulerConfig): void {
  const requests = new Map<string, Tracked>();
  const order: string[] = [];
  const effects: Effects = {
    dispatch(id, backendId, _pausedMs, priority) {
      const t = requests.get(id) as Tracked;
      t.dispatched++;
      t.backend = backendId;
      t.priority = priority;
    },
    reject(id) {
      const t = requests.get(id);
      if (t !== undefined) t.rejected++;
    },
    cancel(id) {
      const t = requests.get(id) as Tracked;
      t.cancelled++;
      // The runtime answers a cancelled request and reports its end.
      pendingEnds.push(id);
    },
    log() {},
  };
  const pendingEnds: string[] = [];
  const specs: BackendSpec[] = [
    { id: BACKENDS[0], type: "vllm" },
    { id: BACKENDS[1], type: "sglang", priorityScheduling: "higher-first" },
  ];
  const core: CoreScheduler = createScheduler({ config, backends: specs, effects });
  let now = 1000;
  let seq = 0;
  const preemptions = [0, 0];
  const handle = (event: Parameters<CoreScheduler["handle"]>[0]) => {
    core.handle(event);
    while (pendingEnds.length > 0) {
      const id = pendingEnds.shift() as string;
      endRequest(id, "cancelled");
    }
  };
  const endRequest = (id: string, outcome: RequestOutcome, stopped = false) => {
    const t = requests.get(id) as Tracked;
    if (t.ended > 0 || t.rejected > 0) return;
    t.ended++;
    handle({
      kind: "request_finished",
      now,
      requestId: id,
      outcome,
      ...(stopped ? { answerStopped: true } : {}),
    });
  };
  const live = () =>
    order.filter((id) => {
      const t = requests.get(id) as Tracked;
      return t.ended === 0 && t.rejected === 0;
    });
  const inFlight = () => live().filter((id) => (requests.get(id) as Tracked).dispatched > 0);
  const pickOf = <T>(list: T[], n: number): T | undefined =>
    list.length === 0 ? undefined : list[n % list.length];

  for (const c of commands) {
    const before = core.snapshot();
    let tickSamples: (BackendMetricsSample | null)[] | null = null;
    switch (c.kind) {
      case "arrive": {
        const id = `r${++seq}`;
        const program = c.program < 0 ? null : PROGRAMS[c.program];
        requests.set(id, {
          rejected: 0,
          dispatched: 0,
          backend: null,
          ended: 0,
          cancelled: 0,
          program,
          pinned: pinName(c.pin),
          arrivedAt: now,
          priority: undefined,
        });
        order.push(id);
        handle({
          kind: "request_arrived",
          now,
          requestId: id,
          programId: program,
          messageChars: [c.tokens * 5],
          final: c.final,
          priorityClass: CLASSES[c.cls],
          ...(c.parent < 0 ? {} : { parentProgramId: PROGRAMS[c.parent] }),
          ...(c.steps === 0 ? {} : { budget: { steps: c.steps } }),
          ...(c.pin < 0 ? {} : { pinnedBackend: pinName(c.pin) as string }),
        });
        break;
      }
      case "first": {
        const id = pickOf(inFlight(), c.pick);
        if (id !== undefined && core.tryCommitFirstByte(id)) {
          handle({ kind: "request_first_token", now, requestId: id });
        }
        break;
      }
      case "progress": {
        const id = pickOf(inFlight(), c.pick);
        if (id !== undefined) {
          handle({ kind: "request_progress", now, requestId: id, completionTokens: c.tokens });
        }
        break;
      }
      case "usage": {
        const id = pickOf(inFlight(), c.pick);
        if (id !== undefined) {
          const prompt = 1000;
          const total = Math.max(1, prompt + c.extra);
          handle({
            kind: "request_usage",
            now,
            requestId: id,
            usage: {
              promptTokens: Math.min(prompt, total),
              completionTokens: 0,
              totalTokens: total,
            },
          });
        }
        break;
      }
      case "finish": {
        // A request still held can only end by its client leaving.
        const id = pickOf(live(), c.pick);
        const held = id !== undefined && (requests.get(id) as Tracked).dispatched === 0;
        if (id !== undefined) endRequest(id, held ? "client_closed" : c.outcome, c.stopped);
        break;
      }
      case "release":
        handle({ kind: "program_release", now, programId: PROGRAMS[c.program] });
        break;
      case "failure":
        handle({ kind: "backend_failure", now, backendId: BACKENDS[c.backend], down: c.down });
        break;
      case "advance":
        now += c.ms;
        break;
      case "tick": {
        const metrics: Record<string, BackendMetricsSample | null> = {};
        tickSamples = c.samples.map((s, i) => {
          if (s === null) return null;
          preemptions[i] += s.preempt;
          return {
            capacityTokens: s.capacityKnown ? CAPACITY : null,
            kvUsage: s.kv,
            running: s.running,
            waiting: s.waiting,
            preemptionsTotal: preemptions[i],
            prefixCacheQueriesTotal: 0,
            prefixCacheHitsTotal: 0,
            promptTokensTotal: 0,
            generationTokensTotal: 0,
            ...(s.hostKv === undefined ? {} : { hostKvTier: true }),
            ...(typeof s.hostKv === "number" ? { hostKvTokens: s.hostKv } : {}),
          };
        });
        tickSamples.forEach((s, i) => {
          metrics[BACKENDS[i]] = s;
        });
        handle({ kind: "tick", now, metrics });
        break;
      }
    }
    checkAfterEvent(core, requests, before, tickSamples, c, config);
  }
  checkEngineOrder(requests, config, `${commands.length} commands`);
  // Drain: every program released, every request in flight finished, then shut down.
  for (const p of PROGRAMS) handle({ kind: "program_release", now, programId: p });
  for (const id of inFlight()) endRequest(id, "ok");
  handle({ kind: "shutdown", now });
  for (const id of live()) endRequest(id, "client_closed");
  for (const [id, t] of requests) {
    const ends = t.rejected + t.ended;
    assert.equal(ends, 1, `request ${id} ended ${ends} times: ${JSON.stringify(t)}`);
  }
  assert.deepEqual(core.audit(), [], "books after the drain");
  for (const b of core.snapshot().backends) {
    assert.equal(b.activePrograms, 0, `${b.id} still has programs after the drain`);
  }
}

function checkAfterEvent(
  core: CoreScheduler,
  requests: Map<string, Tracked>,
  before: SchedulerSnapshot,
  samples: (BackendMetricsSample | null)[] | null,
  c: Command,
  config: SchedulerConfig,
): void {
  const what = JSON.stringify(c);
  const problems = core.audit();
  assert.deepEqual(problems, [], `books disagree after ${what}: ${problems.join("; ")}`);
  const snap = core.snapshot();
  for (const [id, t] of requests) {
    assert.ok(t.rejected <= 1 && t.dispatched <= 1, `request ${id} answered twice: ${what}`);
    assert.ok(!(t.rejected > 0 && t.dispatched > 0), `request ${id} rejected and dispatched`);
    // P: a pinned request is served by its pinned backend or by none.
    if (t.pinned !== null && t.dispatched > 0) {
      assert.equal(t.backend, t.pinned, `P: request ${id} pinned to ${t.pinned}: ${what}`);
    }
    if (t.pinned === "gone") assert.equal(t.dispatched, 0, `P: ${id} pinned to no backend`);
  }
  for (const b of snap.backends) {
    for (const k of [
      "reasoningTokens",
      "actingTokens",
      "markedTokens",
      "activePrograms",
    ] as const) {
      assert.ok(b[k] >= -1e-6, `${b.id}.${k} = ${b[k]} < 0 after ${what}`);
    }
  }
  // B bounds tr's admissions; the default router forwards whatever arrives.
  if (config.mode === "tr") checkBounded(before, snap, what);
  checkPausePrice(snap, what, config.tierPacking === "gpu");
  if (c.kind === "tick" && samples !== null) checkWorkConserving(requests, snap, samples, what);
}

/** W, after a tick (see the file comment). */
function checkWorkConserving(
  requests: Map<string, Tracked>,
  snap: SchedulerSnapshot,
  samples: (BackendMetricsSample | null)[],
  what: string,
): void {
  if (snap.queueLength === 0) return;
  // A held request whose program waits for a pinned backend (its own pin or another held
  // request's) may wait while another backend idles: it can be served nowhere else.
  const boundTo = new Map<string, string | null>();
  for (const [id, t] of requests) {
    if (t.dispatched > 0 || t.ended > 0 || t.rejected > 0) continue;
    const key = t.program ?? id;
    if (!boundTo.has(key) || t.pinned !== null)
      boundTo.set(key, t.pinned ?? boundTo.get(key) ?? null);
  }
  snap.backends.forEach((b, i) => {
    let mayTake = false;
    for (const pin of boundTo.values()) if (pin === null || pin === b.id) mayTake = true;
    if (!mayTake) return;
    // A backend of unknown capacity is placed on by its engine's report: only when it has one.
    const s = samples[i];
    if (!b.healthy || (b.capacityTokens === null && (s === null || s.waiting === null))) return;
    let running = 0;
    for (const t of requests.values()) {
      if (t.backend === b.id && t.dispatched > 0 && t.ended === 0 && t.rejected === 0) running++;
    }
    const engineIdle = s !== null && s.running === 0 && s.waiting === 0;
    const idle = running === 0 && (b.activePrograms === 0 || engineIdle);
    assert.ok(
      !idle,
      `W: ${snap.queueLength} request(s) held while ${b.id} is idle after ${what}: ${JSON.stringify(b)}`,
    );
  });
}

/** B (see the file comment). */
function checkBounded(before: SchedulerSnapshot, after: SchedulerSnapshot, what: string): void {
  const programsOf = (s: SchedulerSnapshot) => [...s.programs, ...s.anonymousPrograms];
  const wasOn = new Map(programsOf(before).map((p) => [p.id, p.backend]));
  for (const b of after.backends) {
    const capacity = b.admissionCapacityTokens;
    if (capacity === null || b.remainingTokens === null) continue;
    const here = programsOf(after).filter((p) => p.backend === b.id);
    const newcomers = here.filter((p) => wasOn.get(p.id) !== b.id);
    if (newcomers.length === 0) continue;
    let maxNeed = 0;
    let extra = 0; // concurrent requests of a newcomer each count as pending in the truth room
    for (const p of newcomers) {
      maxNeed = Math.max(maxNeed, p.totalTokens + p.headroomTokens);
      extra += Math.max(0, p.inFlight - 1) * p.totalTokens;
    }
    let marked = 0;
    for (const p of here) if (p.markedForPause) marked += p.totalTokens + p.headroomTokens;
    const load = capacity - b.remainingTokens - marked;
    assert.ok(
      load <= capacity + maxNeed + extra + 1e-6,
      `B: ${b.id} took ${newcomers.map((p) => p.id)} and is at ${load} of ${capacity} (+ one need ${maxNeed}) after ${what}: ${describe(b)}`,
    );
  }
}

/** O (see the file comment). */
function checkEngineOrder(
  requests: Map<string, Tracked>,
  config: SchedulerConfig,
  what: string,
): void {
  // The bound the tail preset sets on a held request: ageing where it ages, else the max pause.
  const ageing = config.ageingMs ?? 0;
  const bound = ageing > 0 ? Math.min(ageing, config.maxPauseMs) : config.maxPauseMs;
  const onB1: Tracked[] = [];
  for (const t of requests.values()) {
    if (t.dispatched === 0) continue;
    if (t.backend === BACKENDS[0]) assert.equal(t.priority, null, `O: b0 got a priority: ${what}`);
    else {
      assert.ok(Number.isInteger(t.priority), `O: b1 got ${t.priority}: ${what}`);
      onB1.push(t);
    }
  }
  for (const a of onB1) {
    for (const b of onB1) {
      if (b.arrivedAt < a.arrivedAt + bound) continue;
      // Higher first on b1: b must not rank above a.
      assert.ok(
        -(b.priority as number) >= -(a.priority as number),
        `O: a request ${b.arrivedAt - a.arrivedAt} ms younger ranks ahead (${b.priority} > ${a.priority}) under ${config.engineOrder}: ${what}`,
      );
    }
  }
}

/** T (see the file comment). */
function checkPausePrice(after: SchedulerSnapshot, what: string, packed: boolean): void {
  for (const b of after.backends) {
    const gpu = b.capacityTokens;
    const host = b.lastMetrics?.hostKvTier === true ? b.lastMetrics.hostKvTokens : undefined;
    const got = b.admissionCapacityTokens;
    const why = `T: ${b.id} after ${what}: gpu ${gpu}, host ${host}, price ${b.pausePrice}, admission ${got}`;
    if (gpu === null) {
      assert.equal(got, null, why);
      continue;
    }
    if (host === undefined) {
      assert.equal(b.pausePrice, "prefill", why);
      assert.equal(got, gpu, why);
      continue;
    }
    assert.ok(got !== null && got >= gpu && got <= Math.max(gpu, host), why);
    // Packed under the GPU, a transfer admits no more than a re-prefill would.
    assert.equal(got > gpu, !packed && b.pausePrice === "transfer" && host > gpu, why);
  }
}

const describe = (b: BackendView) =>
  JSON.stringify({ used: b.usedTokens, room: b.remainingTokens, truth: b.truth });

const runs = Number(process.env.FC_RUNS ?? 150);
const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const path = process.env.FC_PATH;
const params = {
  numRuns: runs,
  ...(seed === undefined ? {} : { seed }),
  ...(path === undefined ? {} : { path }),
};

test("core invariants hold under random events on the shipped defaults, priorities off", () => {
  fc.assert(
    fc.property(fc.array(commandArb, { minLength: 30, maxLength: 150 }), (commands) =>
      run(commands, { ...DEFAULT_SCHEDULER_CONFIG }),
    ),
    params,
  );
});

test("the engine order holds for every order and tail preset, and reaches only declared backends", () => {
  fc.assert(
    fc.property(
      fc.array(commandArb, { minLength: 30, maxLength: 150 }),
      fc.constantFrom(...ENGINE_ORDER_NAMES),
      fc.constantFrom(...TAIL_NAMES),
      fc.boolean(),
      (commands, engineOrder, tail, mode) =>
        run(commands, {
          ...DEFAULT_SCHEDULER_CONFIG,
          ...TAIL_PRESETS[tail],
          mode: mode ? "tr" : "default",
          engineOrder,
        }),
    ),
    params,
  );
});

test("core invariants hold under random events on the shipped defaults, priorities on", () => {
  fc.assert(
    fc.property(fc.array(commandArb, { minLength: 30, maxLength: 150 }), (commands) =>
      run(commands, { ...DEFAULT_SCHEDULER_CONFIG, priority: {} }),
    ),
    params,
  );
});
