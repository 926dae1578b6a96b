import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness, type Harness } from "./harness.ts";

// A request that continues a response stored on one backend (pinned-backend.ts) is served
// there or nowhere. Flat buffer (100 per program) for exact arithmetic.

const pin = (backend: string) => ({ pinnedBackend: backend });

function end(h: Harness, requestId: string, programId: string, tokens: number) {
  h.usage(requestId, tokens);
  h.finish(requestId);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId });
}

test("tr: a new pinned program goes to its backend although another has more room", () => {
  const h = createHarness({ capacity: 10_000 });
  h.arrive("a1", "A", 3000); // b0
  h.arrive("n1", "N", 100, pin("b0")); // fewest active tokens would be b1
  assert.equal(h.dispatchOf("n1")?.backendId, "b0", "want the pinned backend, not b1");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("tr: a program active elsewhere moves to the pinned backend, its books with it", () => {
  const h = createHarness({ capacity: 10_000 });
  h.turn("p1", "P", 100); // b0, then in its tool call
  h.arrive("q1", "Q", 100); // b1
  h.arrive("p2", "P", 100, pin("b1"));
  assert.equal(h.dispatchOf("p2")?.backendId, "b1");
  assert.equal(h.program("P")?.backend, "b1");
  assert.equal(h.backend("b0").activePrograms, 0, "P left b0's books");
  assert.equal(h.scheduler.snapshot().counters.migrations, 1);
  assert.deepEqual(h.scheduler.audit(), []);
});

/**
 * P paused from b0 (its origin, later empty and idle) while its next request continues a
 * response stored on b1, which is full: it waits for b1.
 */
function pinnedToFullBackend(config = {}) {
  const h = createHarness({ capacity: 1000, config });
  h.turn("p1", "P", 100); // b0 (need 200)
  h.arrive("x1", "X", 850); // b1 (need 950)
  h.arrive("y1", "Y", 650); // b0: 200 + 750
  h.tick({ b0: h.sample(800) }); // b0 over: P (in its tool call) paused
  assert.equal(h.program("P")?.state, "PAUSED");
  end(h, "y1", "Y", 650); // b0 empty
  h.tick({ b0: h.sample(1000) });
  h.arrive("p2", "P", 100, pin("b1"));
  h.tick({ b0: h.sample(1000, { running: 0, waiting: 0 }) });
  return h;
}

test("tr: a paused program pinned to a full backend waits for it, not for its idle origin", () => {
  const h = pinnedToFullBackend();
  assert.equal(h.dispatchOf("p2"), undefined, "b0 is idle and has room, but holds no response");
  end(h, "x1", "X", 850); // b1 frees
  assert.equal(h.dispatchOf("p2")?.backendId, "b1");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("tr: an overdue pinned program gets room made on its backend, not the roomiest one", () => {
  const h = createHarness({ capacity: 1000, config: { ageingMs: 5000 } });
  h.turn("a1", "A", 700); // b0
  h.turn("b1", "B", 700); // b1, in its tool call
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "A" }); // b0 empty
  h.arrive("p1", "P", 300, pin("b1")); // need 400 > b1's room 200
  assert.equal(h.dispatchOf("p1"), undefined);
  h.advance(5000);
  h.tick();
  assert.equal(h.dispatchOf("p1")?.backendId, "b1", "room made on b1 (b0 had more)");
  assert.equal(h.program("B")?.state, "PAUSED", "B, in its tool call, made the room");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a request pinned to an unknown or unhealthy backend is refused, never placed elsewhere", () => {
  const h = createHarness({ capacity: 10_000 });
  h.arrive("u1", "U", 100, pin("gone"));
  h.scheduler.handle({ kind: "backend_failure", now: h.now, backendId: "b1", down: true });
  h.arrive("v1", "V", 100, pin("b1"));
  for (const id of ["u1", "v1"]) {
    assert.equal(h.dispatchOf(id), undefined);
    assert.equal(h.rejectOf(id)?.error.code, "stored_response_unavailable", id);
    assert.equal(h.rejectOf(id)?.error.status, 503, id);
  }
  assert.equal(h.program("U"), undefined, "a refused request leaves no program behind");
});

test("a parked pinned request is refused when its backend turns unhealthy; the pin ends", () => {
  const h = pinnedToFullBackend();
  h.scheduler.handle({ kind: "backend_failure", now: h.now, backendId: "b1", down: true });
  h.tick({ b1: null });
  assert.equal(h.rejectOf("p2")?.error.code, "stored_response_unavailable");
  h.arrive("p3", "P", 100); // a request of P that continues nothing
  assert.equal(h.dispatchOf("p3")?.backendId, "b0");
});

test("once its pinned request has gone, a program's other waiting request goes where there is room", () => {
  const h = pinnedToFullBackend();
  h.arrive("p3", "P", 100); // continues nothing, waits with p2 for b1
  assert.equal(h.dispatchOf("p3"), undefined);
  h.finish("p2", "client_closed");
  h.tick({ b0: h.sample(1000, { running: 0, waiting: 0 }) });
  assert.equal(h.dispatchOf("p3")?.backendId, "b0");
});

test("a program's requests pinned to two backends: the second is refused", () => {
  const h = pinnedToFullBackend();
  h.arrive("p3", "P", 100, pin("b0"));
  assert.equal(h.rejectOf("p3")?.error.code, "bad_request");
  assert.equal(h.dispatchOf("p2"), undefined, "the first still waits for b1");
});

test("default mode: a program moves to the backend of the response it continues", () => {
  const h = createHarness({ config: { mode: "default" } });
  h.turn("p1", "P", 100); // b0
  h.arrive("p2", "P", 100, pin("b1"));
  assert.equal(h.dispatchOf("p2")?.backendId, "b1");
  h.arrive("p3", "P", 100); // it stays there
  assert.equal(h.dispatchOf("p3")?.backendId, "b1");
});

test("priorities on: a pinned program is placed, moved and resumed on its backend only", () => {
  const h = createHarness({ capacity: 10_000, config: { priority: {} } });
  h.arrive("a1", "A", 3000); // b0
  h.arrive("n1", "N", 100, pin("b0"));
  assert.equal(h.dispatchOf("n1")?.backendId, "b0");
  h.finish("n1");
  h.arrive("n2", "N", 100, pin("b1"));
  assert.equal(h.dispatchOf("n2")?.backendId, "b1");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("priorities on: a program pinned to a full backend leaves its own and waits for it", () => {
  const h = createHarness({ capacity: 1000, config: { priority: {} } });
  h.turn("p1", "P", 100); // b0
  h.arrive("x1", "X", 800); // b1
  assert.equal(h.dispatchOf("x1")?.backendId, "b1");
  h.arrive("p2", "P", 100, pin("b1"));
  h.tick({ b0: h.sample(1000, { running: 0, waiting: 0 }) });
  assert.equal(h.dispatchOf("p2"), undefined, "b0 has room, but holds no response");
  assert.equal(h.backend("b0").activePrograms, 0, "P left b0");
  end(h, "x1", "X", 800);
  assert.equal(h.dispatchOf("p2")?.backendId, "b1");
  assert.deepEqual(h.scheduler.audit(), []);
});
