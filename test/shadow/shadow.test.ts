import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { BackendSpec, CreateSchedulerOptions, Scheduler } from "../../src/core/api.ts";
import type { BackendMetricsSample, SchedulerEvent } from "../../src/core/events.ts";
import { createScheduler, DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { combineHooks, createRunLoop, type RunLoopHooks } from "../../src/runtime/run-loop.ts";
import { createEvidenceRecorder } from "../../src/shadow/engine-evidence.ts";
import { createShadow, type Shadow } from "../../src/shadow/shadow.ts";
import { type Logger, silentLogger } from "../../src/util/logger.ts";

/**
 * The shadow (src/shadow/shadow.ts) on the bare run loop: it never changes what the router's
 * core does, a failure inside it stays inside it, and its books stay consistent although it
 * hears of the first tokens and ends of requests it never seated.
 */

const BACKENDS: BackendSpec[] = [
  { id: "b0", type: "vllm" },
  { id: "b1", type: "vllm" },
];
/** Small engines: a few programs of a few thousand tokens fill them. */
const CAPACITY = 6000;
const PROGRAMS = ["p0", "p1", "p2", "p3", "p4"];

function sample(over: Partial<BackendMetricsSample> = {}): BackendMetricsSample {
  return {
    capacityTokens: CAPACITY,
    kvUsage: 0,
    running: 0,
    waiting: 0,
    preemptionsTotal: 0,
    prefixCacheQueriesTotal: 0,
    prefixCacheHitsTotal: 0,
    promptTokensTotal: 0,
    generationTokensTotal: 0,
    ...over,
  };
}

type Command =
  | { op: "arrive"; program: string | null; chars: number }
  | { op: "first"; pick: number }
  | { op: "finish"; pick: number; ok: boolean; tokens: number }
  | { op: "tick"; kv: number; waiting: number; preempted: number }
  | { op: "release"; program: string }
  | { op: "wait"; ms: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant("arrive" as const),
      program: fc.option(fc.constantFrom(...PROGRAMS), { freq: 6 }),
      chars: fc.integer({ min: 100, max: 24_000 }),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant("first" as const), pick: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant("finish" as const),
      pick: fc.nat(),
      ok: fc.boolean(),
      tokens: fc.integer({ min: 50, max: 8000 }),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      op: fc.constant("tick" as const),
      kv: fc.double({ min: 0, max: 1, noNaN: true }),
      waiting: fc.integer({ min: 0, max: 3 }),
      preempted: fc.integer({ min: 0, max: 2 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      op: fc.constant("release" as const),
      program: fc.constantFrom(...PROGRAMS),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant("wait" as const),
      ms: fc.integer({ min: 0, max: 400_000 }),
    }),
    weight: 2,
  },
);

/** What the router's core did: every effect, in order, and its final snapshot. */
interface Trace {
  effects: string[];
  snapshot: string;
}

/**
 * Run `commands` through a default router's run loop, as the proxy would (a request is opened
 * before it arrives and ends once), with `shadow`'s hooks on the loop when given.
 */
function drive(commands: Command[], shadow: Shadow | null): Trace {
  const effects: string[] = [];
  const record: RunLoopHooks = {
    onDispatch: (id, g) => effects.push(`dispatch ${id} ${g.backendId} ${g.pausedMs}`),
    onReject: (id, e) => effects.push(`reject ${id} ${e.code}`),
  };
  const loop = createRunLoop({
    logger: silentLogger,
    hooks: shadow === null ? record : combineHooks(shadow.hooks, record),
    createScheduler: (fx) =>
      createScheduler({
        config: { ...DEFAULT_SCHEDULER_CONFIG, mode: "default" },
        backends: BACKENDS,
        effects: fx,
      }),
  });
  let now = 1000;
  let seq = 0;
  let preemptions = 0;
  const live: string[] = [];
  const tick = (over: Partial<BackendMetricsSample>) =>
    loop.send({
      kind: "tick",
      now,
      metrics: Object.fromEntries(BACKENDS.map((b) => [b.id, sample(over)])),
    });
  tick({});
  for (const c of commands) {
    switch (c.op) {
      case "arrive": {
        const id = `r${++seq}`;
        loop.requests.open(id);
        live.push(id);
        loop.send({
          kind: "request_arrived",
          now,
          requestId: id,
          programId: c.program,
          messageChars: [c.chars],
          final: false,
        });
        break;
      }
      case "first": {
        if (live.length === 0) break;
        loop.send({ kind: "request_first_token", now, requestId: live[c.pick % live.length] });
        break;
      }
      case "finish": {
        if (live.length === 0) break;
        const [id] = live.splice(c.pick % live.length, 1);
        loop.send({
          kind: "request_usage",
          now,
          requestId: id,
          usage: { promptTokens: c.tokens, completionTokens: 20, totalTokens: c.tokens + 20 },
        });
        loop.requests.close(id);
        loop.send({
          kind: "request_finished",
          now,
          requestId: id,
          outcome: c.ok ? "ok" : "upstream_error",
        });
        break;
      }
      case "tick":
        preemptions += c.preempted;
        tick({ kvUsage: c.kv, waiting: c.waiting, preemptionsTotal: preemptions });
        break;
      case "release":
        loop.send({ kind: "program_release", now, programId: c.program });
        break;
      case "wait":
        now += c.ms;
        // The router's one deadline timer ticks for both cores (service.ts).
        tick({});
        break;
      default:
    }
  }
  return { effects, snapshot: JSON.stringify(loop.scheduler.snapshot()) };
}

/** A tr core that throws on its `throwAt`-th event (never when null). */
function shadowOf(throwAt: number | null, logger: Logger = silentLogger): Shadow {
  let handled = 0;
  return createShadow({
    config: DEFAULT_SCHEDULER_CONFIG,
    backends: BACKENDS,
    logger,
    now: () => 0,
    createScheduler(o: CreateSchedulerOptions): Scheduler {
      const core = createScheduler(o);
      return {
        ...core,
        handle(e: SchedulerEvent) {
          if (++handled === throwAt) throw new Error("shadow core bug");
          core.handle(e);
        },
      };
    },
  });
}

const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const params = {
  numRuns: Number(process.env.FC_RUNS ?? 100),
  ...(seed === undefined ? {} : { seed }),
  ...(process.env.FC_PATH === undefined ? {} : { path: process.env.FC_PATH }),
};

test("the shadow never changes the router's effects, contains its failures, and keeps its books", () => {
  // A failure prints fast-check's seed and path; FC_SEED=<seed> FC_PATH=<path> replays it.
  fc.assert(
    fc.property(
      fc.array(commandArb, { minLength: 20, maxLength: 120 }),
      fc.option(fc.integer({ min: 1, max: 200 }), { freq: 3 }),
      (commands, throwAt) => {
        const alone = drive(commands, null);
        const shadow = shadowOf(throwAt);
        const watched = drive(commands, shadow);
        assert.deepEqual(watched, alone, "the router's core did the same with a shadow beside it");
        const s = shadow.summary();
        const threw = throwAt !== null && throwAt <= s.events;
        assert.equal(s.errors, threw ? 1 : 0, "one failure, counted, never thrown");
        if (threw) return;
        // It heard first tokens and ends of requests it held and never seated: still consistent.
        const core = shadow.scheduler as Scheduler & { audit(): string[] };
        assert.deepEqual(core.audit(), [], "the shadow's books recount to the same sums");
        const ends = s.held.ends;
        assert.equal(
          ends.seated + ends.rejected + ends.request_ended + (s.held.now ?? 0),
          s.held.held,
          "each hold ended once, or still holds",
        );
        assert.equal(s.held.held, s.decisions.hold);
        assert.ok(s.seats.total === s.seats.same + s.seats.elsewhere + s.seats.unknown);
      },
    ),
    params,
  );
});

test("each decision is one debug line, `shadow decision`, with its kind, program, backend and reason", () => {
  const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const logger: Logger = {
    ...silentLogger,
    debug: (msg, fields = {}) => lines.push({ msg, fields }),
    child: () => logger,
  };
  const shadow = shadowOf(null, logger);
  // Two programs too large to share a backend, a third that must wait, and their ends.
  const arrive = (program: string): Command => ({ op: "arrive", program, chars: 20_000 });
  drive(
    [
      arrive("p0"),
      arrive("p1"),
      arrive("p2"),
      { op: "finish", pick: 0, ok: true, tokens: 3000 },
      { op: "wait", ms: 5000 },
    ],
    shadow,
  );
  const decided = lines.filter((l) => l.msg === "shadow decision");
  const total = Object.values(shadow.summary().decisions).reduce((a, b) => a + b, 0);
  assert.ok(shadow.summary().decisions.hold >= 1, JSON.stringify(shadow.summary().decisions));
  assert.equal(decided.length, total, "one line per decision");
  for (const { fields } of decided) {
    for (const key of ["kind", "programId", "backend", "reason", "changesTraffic"])
      assert.ok(key in fields, `${key} in ${JSON.stringify(fields)}`);
  }
  const hold = decided.find((l) => l.fields.kind === "hold");
  assert.equal(hold?.fields.programId, "p2");
  assert.equal(hold?.fields.changesTraffic, true);
});

test("a shadow whose core throws on every event is counted and logged a bounded number of times", () => {
  const lines: string[] = [];
  const logger: Logger = {
    ...silentLogger,
    error: (msg) => lines.push(msg),
    child: () => logger,
  };
  const shadow = createShadow({
    config: DEFAULT_SCHEDULER_CONFIG,
    backends: BACKENDS,
    logger,
    now: () => 0,
    createScheduler: (o) => ({
      ...createScheduler(o),
      handle() {
        throw new Error("always");
      },
    }),
  });
  for (let i = 0; i < 2500; i++)
    shadow.hooks.onEvent?.({ kind: "tick", now: i, metrics: { b0: sample() } });
  const s = shadow.summary();
  assert.equal(s.errors, 2500);
  assert.equal(s.events, 2500);
  assert.equal(s.engines.ticks, 2500, "the engines' evidence does not depend on the core");
  // The first five, then one line per thousand.
  assert.equal(lines.length, 7);
  assert.ok(lines.every((l) => l === "shadow failed; the router goes on as before"));
});

test("a shadow forgets every request that ended, whether its core works, throws or never started", () => {
  // A failure prints fast-check's seed and path; FC_SEED=<seed> FC_PATH=<path> replays it.
  fc.assert(
    fc.property(
      fc.array(commandArb, { minLength: 20, maxLength: 120 }),
      fc.constantFrom("works", "throws", "never started"),
      fc.integer({ min: 1, max: 200 }),
      (commands, kind, throwAt) => {
        const shadow =
          kind === "never started"
            ? createShadow({
                config: DEFAULT_SCHEDULER_CONFIG,
                backends: BACKENDS,
                logger: silentLogger,
                now: () => 0,
                createScheduler: () => {
                  throw new Error("cannot build");
                },
              })
            : shadowOf(kind === "throws" ? throwAt : null);
        // Every request that arrived ends: one finish per command drains whatever is left.
        const finishAll: Command[] = commands.map(() => ({
          op: "finish",
          pick: 0,
          ok: true,
          tokens: 100,
        }));
        drive([...commands, ...finishAll], shadow);
        assert.equal(shadow.followed(), 0, "nothing kept of a request that ended");
      },
    ),
    params,
  );
});

test("a shadow whose core cannot be built watches nothing and the router is not told", () => {
  const shadow = createShadow({
    config: DEFAULT_SCHEDULER_CONFIG,
    backends: BACKENDS,
    logger: silentLogger,
    now: () => 5,
    createScheduler: () => {
      throw new Error("cannot build");
    },
  });
  shadow.hooks.onEvent?.({ kind: "shutdown", now: 1 });
  assert.equal(shadow.scheduler, null);
  assert.equal(shadow.nextDeadline(), null);
  const s = shadow.summary();
  assert.equal(s.errors, 1);
  assert.deepEqual(shadow.gauges(), { pausedPrograms: null, heldRequests: null });
});

test("hooks added to a loop later hear every event after its own", () => {
  const heard: string[] = [];
  const loop = createRunLoop({
    logger: silentLogger,
    hooks: { onEvent: (e) => heard.push(`own ${e.kind}`) },
    createScheduler: (fx) =>
      createScheduler({ config: DEFAULT_SCHEDULER_CONFIG, backends: BACKENDS, effects: fx }),
  });
  loop.send({ kind: "tick", now: 1, metrics: {} });
  loop.addHooks({ onEvent: (e) => heard.push(`added ${e.kind}`) });
  loop.send({ kind: "shutdown", now: 2 });
  assert.deepEqual(heard, ["own tick", "own shutdown", "added shutdown"]);
});

test("engine evidence: waiting, peak KV use and the rise of each engine's preemption counter", () => {
  const ev = createEvidenceRecorder();
  const tick = (metrics: Record<string, BackendMetricsSample | null>): SchedulerEvent => ({
    kind: "tick",
    now: 0,
    metrics,
  });
  // The first counter seen is a baseline, not preemptions.
  ev.observe(tick({ b0: sample({ preemptionsTotal: 40, kvUsage: 0.5 }), b1: null }));
  ev.observe(tick({ b0: sample({ preemptionsTotal: 43, kvUsage: 0.97 }) }));
  ev.observe(tick({ b1: sample({ waiting: 2, preemptionsTotal: 1 }) }));
  // An engine that restarted: its counter fell, and counts on from there.
  ev.observe(tick({ b0: sample({ preemptionsTotal: 2 }) }));
  ev.observe(tick({ b0: sample({ preemptionsTotal: 5 }) }));
  ev.observe(tick({})); // a deadline tick: no samples, not counted
  ev.observe({ kind: "shutdown", now: 1 });
  assert.deepEqual(ev.view(), {
    ticks: 5,
    overflowTicks: 3,
    waitingSamples: 1,
    peakWaiting: 2,
    peakKvUsage: 0.97,
    preemptions: 6,
  });
});
