import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePrometheusText, sumOf } from "../../src/backends/prometheus-text.ts";
import type { ProgramView, SchedulerSnapshot } from "../../src/core/api.ts";
import { createRouterMetrics } from "../../src/metrics/router-metrics.ts";

const program = (
  id: string,
  status: ProgramView["status"],
  state: ProgramView["state"],
): ProgramView => ({
  id,
  backend: state === "ACTIVE" ? "http://b0" : null,
  originBackend: null,
  status,
  state,
  totalTokens: 100,
  headroomTokens: 100,
  lent: false,
  steps: 1,
  inFlight: 0,
  parkedRequests: 0,
  markedForPause: false,
  pausedMs: 0,
  pausedSince: null,
  parentProgramId: null,
  lastActivity: 0,
  likelyDoneAt: null,
  children: [],
});

function snapshotWith(pauses: number): SchedulerSnapshot {
  return {
    mode: "tr",
    now: 0,
    budgetsExhausted: { steps: 0, tokens: 0, wall: 0 },
    programs: [
      program("secret-program-1", "REASONING", "ACTIVE"),
      program("secret-program-2", "ACTING", "PAUSED"),
    ],
    anonymousPrograms: [],
    backends: [
      {
        id: "http://b0",
        healthy: true,
        consecutiveFailures: 0,
        capacityTokens: 1000,
        admissionCapacityTokens: 1000,
        pausePrice: "prefill",
        hostLoadBytesPerSecond: null,
        priorityScheduling: null,
        usedTokens: 300,
        beliefRoomTokens: 700,
        remainingTokens: 900,
        truth: {
          sampledAt: 0,
          kvUsage: 0.1,
          running: 1,
          waiting: 0,
          preempting: false,
          pendingTokens: 0,
          full: false,
          roomTokens: 900,
          gapTokens: 200,
        },
        lentPrograms: 0,
        sharedTokens: 0,
        markedTokens: 0,
        reasoningTokens: 100,
        actingTokens: 0,
        activePrograms: 1,
        reasoningPrograms: 1,
        actingPrograms: 0,
        anonymousInFlight: 0,
        lastMetrics: null,
      },
    ],
    counters: {
      pauses,
      marks: 1,
      resumes: 0,
      forcedResumes: 0,
      releases: 0,
      idleReleases: 0,
      migrations: 0,
      likelyDoneMarks: 0,
      likelyDoneContinued: 0,
      likelyDoneReleases: 0,
      likelyDoneReturns: 0,
    },
    queueLength: 2,
    pausedPrograms: 1,
    endedPrograms: 7,
  };
}

test("gauges and counters render from the snapshot taken at scrape time", async () => {
  let pauses = 3;
  const m = createRouterMetrics({ snapshot: () => snapshotWith(pauses) });
  // The runtime observes each pause when the event that ended it is handled.
  m.pauseObserved(1500);
  m.pauseObserved(250);
  m.requestFinished("chat", "ok", 0.2);
  m.firstToken("chat", 0.05);
  m.upstreamError("unreachable");
  m.tick(0.01);
  m.schedulerError("tick");
  const f = parsePrometheusText(await m.render());
  assert.equal(sumOf(f, "maitred_pauses_total"), 3);
  assert.equal(sumOf(f, "maitred_queue_length"), 2);
  assert.equal(sumOf(f, "maitred_backend_remaining_tokens"), 900, "the room admission reads");
  assert.equal(sumOf(f, "maitred_backend_belief_gap_tokens"), 200, "truth room − belief room");
  assert.equal(sumOf(f, "maitred_backend_truth_full"), 0);
  assert.equal(sumOf(f, "maitred_pause_duration_seconds_count"), 2);
  assert.equal(sumOf(f, "maitred_upstream_errors_total"), 1);
  const schedulerErrors = f.get("maitred_scheduler_errors_total") ?? [];
  assert.deepEqual(
    schedulerErrors.map((x) => [x.labels.stage, x.value]),
    [
      ["event", 0],
      ["tick", 1],
    ],
    "both stages exported, zeros included",
  );
  const programs = f.get("maitred_programs") ?? [];
  assert.equal(
    programs.find((s) => s.labels.status === "ACTING" && s.labels.state === "PAUSED")?.value,
    1,
  );
  assert.equal(programs.length, 4, "every status×state pair is exported, zeros included");

  pauses = 5;
  const again = parsePrometheusText(await m.render());
  assert.equal(
    sumOf(again, "maitred_pauses_total"),
    5,
    "the counter follows the core's monotonic count",
  );
  assert.equal(
    sumOf(again, "maitred_pause_duration_seconds_count"),
    2,
    "observations are drained once",
  );
});

test("no label value ever carries a program id", async () => {
  const m = createRouterMetrics({ snapshot: () => snapshotWith(0) });
  const text = await m.render();
  assert.doesNotMatch(text, /secret-program/);
  for (const [name, samples] of parsePrometheusText(text)) {
    assert.ok(name.startsWith("maitred_"), `metric ${name} is not named maitred_*`);
    for (const s of samples) assert.ok(!("program" in s.labels) && !("program_id" in s.labels));
  }
});

test("the sizes of the router's bounded memories are gauges: ended ids, response homes, the log's unread bytes and its dropped lines", async () => {
  let dropped = 3;
  const m = createRouterMetrics({
    snapshot: () => snapshotWith(0),
    sizes: { responseHomes: () => 42 },
    logBuffer: { bufferedBytes: () => 1234, droppedLines: () => dropped },
  });
  let f = parsePrometheusText(await m.render());
  assert.equal(sumOf(f, "maitred_ended_programs_remembered"), 7, "the snapshot's count");
  assert.equal(sumOf(f, "maitred_response_homes"), 42);
  assert.equal(sumOf(f, "maitred_log_buffered_bytes"), 1234);
  assert.equal(sumOf(f, "maitred_log_lines_dropped_total"), 3);
  dropped = 10;
  f = parsePrometheusText(await m.render());
  assert.equal(sumOf(f, "maitred_log_lines_dropped_total"), 10, "follows the sink's count");
});
