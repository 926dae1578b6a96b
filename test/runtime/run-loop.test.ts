import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerEvent } from "../../src/core/events.ts";
import { Errors, MaitredError } from "../../src/errors.ts";
import { createRunLoop } from "../../src/runtime/run-loop.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { createFakeScheduler, type FakeScheduler } from "./fake-scheduler.ts";

const arrived = (requestId: string): SchedulerEvent => ({
  kind: "request_arrived",
  now: 0,
  requestId,
  programId: "p",
  messageChars: [10],
  final: false,
});

test("a dispatch during request_arrived resolves the request's grant", async () => {
  const loop = createRunLoop({
    logger: silentLogger,
    createScheduler: (fx) =>
      createFakeScheduler(fx, (e, fx2) => {
        if (e.kind === "request_arrived") fx2.dispatch(e.requestId, "http://b0", 0, null);
      }),
  });
  const pending = loop.requests.open("r1");
  loop.send(arrived("r1"));
  assert.equal(
    pending.status,
    "dispatched",
    "granted before send returns: no wait for a parked request",
  );
  assert.deepEqual(await pending.granted, { backendId: "http://b0", pausedMs: 0, priority: null });
});

test("a parked request waits until a later event dispatches it", async () => {
  const loop = createRunLoop({
    logger: silentLogger,
    createScheduler: (fx) =>
      createFakeScheduler(fx, (e, fx2) => {
        if (e.kind === "tick") fx2.dispatch("r1", "http://b1", 4200, 17);
      }),
  });
  const pending = loop.requests.open("r1");
  loop.send(arrived("r1"));
  assert.equal(pending.status, "waiting");
  loop.send({ kind: "tick", now: 5000, metrics: {} });
  assert.deepEqual(await pending.granted, { backendId: "http://b1", pausedMs: 4200, priority: 17 });
});

test("reject rejects the grant with the core's error", async () => {
  const loop = createRunLoop({
    logger: silentLogger,
    createScheduler: (fx) =>
      createFakeScheduler(fx, (e, fx2) => {
        if (e.kind === "request_arrived") fx2.reject(e.requestId, Errors.noHealthyBackend());
      }),
  });
  const pending = loop.requests.open("r1");
  loop.send(arrived("r1"));
  await assert.rejects(pending.granted, (err: MaitredError) => err.code === "no_healthy_backend");
});

test("cancel reaches a dispatched request's cancel hook with the core's error", () => {
  let sched!: FakeScheduler;
  const loop = createRunLoop({
    logger: silentLogger,
    createScheduler: (fx) => {
      sched = createFakeScheduler(fx, (e, fx2) => {
        if (e.kind === "request_arrived") fx2.dispatch(e.requestId, "b", 0, null);
        if (e.kind === "backend_failure") fx2.cancel("r1", Errors.preempted());
      });
      return sched;
    },
  });
  const pending = loop.requests.open("r1");
  loop.send(arrived("r1"));
  const heard: string[] = [];
  pending.onCancel = (reason) => heard.push(reason.code);
  loop.send({ kind: "backend_failure", now: 1, backendId: "b" });
  assert.ok(pending.cancelReason instanceof MaitredError);
  assert.equal(pending.cancelReason.code, "preempted");
  assert.deepEqual(heard, ["preempted"], "the forwarder's cancel hook ran once");
  loop.send({ kind: "backend_failure", now: 2, backendId: "b" });
  assert.deepEqual(heard, ["preempted"], "a second cancel is a no-op");
});

test("an event sent while effects are applied is handled after the current event, never inside it", () => {
  let depth = 0;
  const order: string[] = [];
  let sched!: FakeScheduler;
  const loop = createRunLoop({
    logger: silentLogger,
    createScheduler: (fx) => {
      sched = createFakeScheduler(fx, (e, fx2) => {
        depth++;
        assert.equal(depth, 1, "the core is never re-entered");
        order.push(e.kind);
        if (e.kind === "request_arrived") fx2.dispatch(e.requestId, "b", 0, null);
        if (e.kind === "tick") fx2.cancel("r1", Errors.shuttingDown());
        depth--;
      });
      return sched;
    },
  });
  const pending = loop.requests.open("r1");
  loop.send(arrived("r1"));
  // A cancel hook reacting synchronously, as the forwarder's may, sends a follow-up event.
  pending.onCancel = () => {
    loop.send({ kind: "request_finished", now: 2, requestId: "r1", outcome: "cancelled" });
    order.push("listener-returned");
  };
  loop.send({ kind: "tick", now: 1, metrics: {} });
  assert.deepEqual(order, ["request_arrived", "tick", "listener-returned", "request_finished"]);
  assert.equal(sched.events.length, 3);
});

test("a scheduler that throws on request_arrived still answers the request with a 500", async () => {
  const failed: string[] = [];
  let ticks = 0;
  const loop = createRunLoop({
    logger: silentLogger,
    onSchedulerError: (e) => failed.push(e.kind),
    createScheduler: (fx) =>
      createFakeScheduler(fx, (e) => {
        if (e.kind === "request_arrived") throw new Error("bug");
        if (e.kind === "tick") ticks++;
      }),
  });
  const pending = loop.requests.open("r1");
  loop.send(arrived("r1"));
  await assert.rejects(pending.granted, (err: MaitredError) => err.status === 500);
  assert.deepEqual(failed, ["request_arrived"], "the failure is counted");
  loop.send({ kind: "tick", now: 1, metrics: {} });
  assert.equal(ticks, 1, "the loop keeps running");
});

test("a dispatch for a request already closed is dropped, and onDispatch fires only for real grants", () => {
  const dispatched: string[] = [];
  const loop = createRunLoop({
    logger: silentLogger,
    hooks: { onDispatch: (id) => dispatched.push(id) },
    createScheduler: (fx) =>
      createFakeScheduler(fx, (e, fx2) => {
        if (e.kind === "tick") {
          fx2.dispatch("gone", "b", 0, null);
          fx2.dispatch("here", "b", 0, null);
        }
      }),
  });
  loop.requests.open("gone");
  loop.requests.close("gone");
  loop.requests.open("here");
  loop.send({ kind: "tick", now: 0, metrics: {} });
  assert.deepEqual(dispatched, ["here"]);
});

test("tryCommitFirstByte asks the core, and is true for a core without the commit", () => {
  const asked: string[] = [];
  const loop = createRunLoop({
    logger: silentLogger,
    createScheduler: (fx) => ({
      ...createFakeScheduler(fx),
      tryCommitFirstByte(id: string) {
        asked.push(id);
        return id !== "preempted";
      },
    }),
  });
  assert.equal(loop.tryCommitFirstByte("r1"), true);
  assert.equal(loop.tryCommitFirstByte("preempted"), false, "the core's refusal is passed on");
  assert.deepEqual(asked, ["r1", "preempted"]);
  const plain = createRunLoop({ logger: silentLogger, createScheduler: createFakeScheduler });
  assert.equal(plain.tryCommitFirstByte("r1"), true, "nothing can preempt without the commit");
});
