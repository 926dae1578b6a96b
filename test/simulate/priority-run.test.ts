import assert from "node:assert/strict";
import { test } from "node:test";
import { AGEING_MS } from "../../src/core/scheduler-constants.ts";
import { resolveTrKnobs } from "../../src/simulate/simulate-options.ts";
import { formatSimulateTable, simulateJson } from "../../src/simulate/simulate-report.ts";
import { sharedRun, smallMixWorkload, smallRun } from "./helpers.ts";

// A chat + agent mix on the tiny cluster, priorities off and on (`--priority`: built-in classes).
const offKnobs = () => resolveTrKnobs({}).knobs;
const onKnobs = () => resolveTrKnobs({ priority: true }).knobs;
const off = () => sharedRun({ knobs: offKnobs() }, true);
const on = () => sharedRun({ knobs: onKnobs() }, true);

test("with priorities the report has per-class stats and the core's class counters", () => {
  const { report, records } = on();
  const i = report.classes.interactive;
  const b = report.classes.bulk;
  assert.ok(i && b, `want interactive and bulk classes, got ${Object.keys(report.classes)}`);
  assert.ok(i.steps_completed > 0 && b.steps_completed > 0);
  assert.equal(i.ttft_ms.count, i.steps_completed, "every simulated step measures its TTFT");
  assert.equal(
    i.steps_completed + b.steps_completed,
    report.steps_completed,
    "classes split the run's steps",
  );
  const interactivePrograms = records.programs.filter((p) => p.priorityClass === "interactive");
  assert.equal(i.programs_started, interactivePrograms.length);
  const core = report.priority;
  assert.ok(core, "priorities in force: the core's counters are reported");
  const admitted =
    core.classes.interactive.admissions.admitted + core.classes.bulk.admissions.admitted;
  assert.ok(admitted > 0, "the core saw the classes the workload sent");
  assert.equal(core.classes.default.admissions.admitted, 0, "every request carried its class");
  assert.equal(core.classes.bulk.settings.starvation_ms, AGEING_MS, "the built-in defaults");
  assert.match(formatSimulateTable([report]), /interactive TTFT p95 \(ms\)/);
  assert.match(formatSimulateTable([report]), /bulk starvation promotions/);
});

test("without priorities classes are still reported from the workload, the core's are absent", () => {
  const { report } = off();
  assert.ok(report.classes.interactive && report.classes.bulk);
  assert.equal(report.priority, undefined);
});

test("interactive chat waits less for its first token with priorities on", () => {
  const a = off().report.classes.interactive;
  const b = on().report.classes.interactive;
  assert.ok(a && b);
  assert.ok(
    (b.ttft_ms.p95 as number) < (a.ttft_ms.p95 as number),
    `TTFT p95 on ${b.ttft_ms.p95} ms, off ${a.ttft_ms.p95} ms: want on < off`,
  );
});

test("runs with priorities give byte-identical JSON", () => {
  // Half a simulated minute is plenty to tell identical runs from different ones.
  const run = () =>
    smallRun({
      workload: smallMixWorkload(),
      knobs: onKnobs(),
      warmupMs: 5000,
      durationMs: 25_000,
    });
  const a = run().report;
  assert.ok(a.priority, "priorities in force");
  assert.equal(simulateJson([a]), simulateJson([run().report]));
});
