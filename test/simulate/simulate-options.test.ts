import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler-config.ts";
import { ConfigError } from "../../src/errors.ts";
import { BATCH_HORIZON_MS } from "../../src/simulate/run-simulation.ts";
import { resolveSimulateFlags } from "../../src/simulate/simulate-options.ts";
import { simulateSweep } from "../../src/simulate/simulate-sweep.ts";
import { loadWorkload } from "../../src/workload/load-workload.ts";
import { runMaitred } from "../cli/run-maitred.ts";

const SMALL = {
  workload: "swe-bash",
  numGpuBlocks: "2000",
  warmup: "0",
  duration: "5s",
};

test("defaults: default and tr at 128 programs on 2 engines, serve's tr knobs", () => {
  const o = resolveSimulateFlags({});
  assert.deepEqual(o.routers, ["default", "tr"]);
  assert.deepEqual(o.concurrency, [128]);
  assert.equal(o.numBackends, 2);
  assert.equal(o.schedulerIntervalMs, 5000);
  assert.equal(o.knobs.placement, DEFAULT_SCHEDULER_CONFIG.placement);
  assert.equal(o.knobs.actingTokenWeight, DEFAULT_SCHEDULER_CONFIG.actingTokenWeight);
  assert.equal(o.warmupMs + o.durationMs, 3_600_000, "one simulated hour");
});

test("--programs alone runs the whole batch: no warm-up, a window the batch ends within", () => {
  const o = resolveSimulateFlags({ programs: "3" });
  assert.equal(o.maxPrograms, 3);
  assert.equal(o.warmupMs, 0);
  assert.equal(o.durationMs, BATCH_HORIZON_MS);
  const windowed = resolveSimulateFlags({ programs: "3", duration: "5m" });
  assert.equal(windowed.durationMs, 300_000, "a given window may stop the batch first");
  assert.equal(resolveSimulateFlags({}).maxPrograms, undefined);
  assert.throws(
    () => resolveSimulateFlags({ programs: "0" }),
    (e: unknown) => e instanceof ConfigError && e.field === "programs",
  );
});

test("tr knobs are parsed with maitred serve's parsers (seconds, booleans, enums)", () => {
  const o = resolveSimulateFlags({
    schedulerInterval: "2",
    actingTokenWeight: "0.5",
    useActingTokenDecay: true,
    placement: "worst-fit",
    maxPause: "10m",
    idleTimeout: "90",
  });
  assert.equal(o.schedulerIntervalMs, 2000);
  assert.equal(o.knobs.actingTokenWeight, 0.5);
  assert.equal(o.knobs.useActingTokenDecay, true);
  assert.equal(o.knobs.placement, "worst-fit");
  assert.equal(o.knobs.maxPauseMs, 600_000);
  assert.equal(o.knobs.idleTimeoutMs, 90_000);
});

test("--priority turns the built-in classes on as maitred serve does; policies and class mix parse", () => {
  assert.equal(resolveSimulateFlags({}).knobs.priority, undefined, "off by default");
  const o = resolveSimulateFlags({
    priority: true,
    queuePolicy: "fcfs",
    priorityPolicy: "slo-based",
    classMix: "interactive=1,bulk=4",
  });
  assert.deepEqual(o.knobs.priority, { queuePolicy: "fcfs", priorityPolicy: "slo-based" });
  assert.deepEqual(o.workload.classMix, [
    { priorityClass: "interactive", weight: 1 },
    { priorityClass: "bulk", weight: 4 },
  ]);
  const policiesOnly = resolveSimulateFlags({ queuePolicy: "sjf" });
  assert.equal(policiesOnly.knobs.priority, undefined, "policies alone do not turn priorities on");
});

test("--tool-time-scale goes into the workload spec, for a mix too; absent, tool times stay", () => {
  assert.equal(resolveSimulateFlags({}).workload.toolTimeScale, undefined);
  assert.equal(resolveSimulateFlags({ toolTimeScale: "50" }).workload.toolTimeScale, 50);
  const mix = resolveSimulateFlags({ workload: "mix:chat=1,deepseek=3", toolTimeScale: "0.5" });
  assert.equal(mix.workload.kind, "mix");
  assert.equal(mix.workload.toolTimeScale, 0.5);
});

test("--unreleased goes into the workload spec as a share; outside 0–1 it is refused", () => {
  assert.equal(resolveSimulateFlags({}).workload.unreleased, undefined);
  assert.equal(resolveSimulateFlags({ unreleased: "0.25" }).workload.unreleased, 0.25);
  for (const bad of ["1.5", "-0.1", "half"]) {
    assert.throws(
      () => resolveSimulateFlags({ unreleased: bad }),
      (e: Error) => e instanceof ConfigError && e.message.startsWith("unreleased: must be"),
      bad,
    );
  }
});

test("bad flags are ConfigErrors that name the flag", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ router: "tr,fastest" }, "router"],
    [{ router: "tr,tr" }, "router"],
    [{ concurrency: "0" }, "concurrency"],
    [{ concurrency: "32,abc" }, "concurrency"],
    [{ profile: "gpt-9" }, "profile"],
    [{ numGpuBlocks: "1" }, "num-gpu-blocks"],
    [{ duration: "0" }, "duration"],
    [{ placement: "first-fit" }, "placement"],
    [{ actingTokenWeight: "-1" }, "acting-token-weight"],
    [{ workload: "nonsense" }, "workload"],
    [{ workload: "mix:chat@vip=1" }, "workload"],
    [{ queuePolicy: "lifo" }, "queue-policy"],
    [{ priorityPolicy: "inverted-slo" }, "priority-policy"],
    [{ classMix: "vip=1" }, "class-mix"],
    [{ toolTimeScale: "0" }, "tool-time-scale"],
    [{ toolTimeScale: "-2" }, "tool-time-scale"],
    [{ toolTimeScale: "NaN" }, "tool-time-scale"],
    [{ toolTimeScale: "slow" }, "tool-time-scale"],
  ];
  for (const [flags, field] of cases) {
    assert.throws(
      () => resolveSimulateFlags(flags),
      (err: unknown) => err instanceof ConfigError && err.field === field,
      `${JSON.stringify(flags)} should fail on ${field}`,
    );
  }
});

test("a sweep gives one run per (router, concurrency), concurrency-major", async () => {
  const o = resolveSimulateFlags({ ...SMALL, router: "tr,default", concurrency: "3,6" });
  const runs = simulateSweep(o, await loadWorkload(o.workload));
  assert.deepEqual(
    runs.map((r) => `${r.router}@${r.concurrency}`),
    ["tr@3", "default@3", "tr@6", "default@6"],
  );
});

test("maitred simulate writes {runs: [...]} with the bench fields and engine truth", async () => {
  const dir = mkdtempSync(join(tmpdir(), "maitred-simulate-"));
  const json = join(dir, "out.json");
  const svg = join(dir, "out.svg");
  const html = join(dir, "out.html");
  const args = ["simulate", "--router", "tr,oracle", "--concurrency", "4", "--duration", "30"];
  const small = ["--workload", "swe-bash", "--num-gpu-blocks", "2000", "--warmup", "0"];
  const outputs = ["--json", json, "--svg", svg, "--html", html];
  const { code, stdout } = await runMaitred([...args, ...small, ...outputs]);
  assert.equal(code, 0);
  const doc = JSON.parse(readFileSync(json, "utf8"));
  assert.equal(doc.runs.length, 2);
  for (const run of doc.runs) {
    for (const key of ["router", "concurrency", "steps_per_min", "programs_completed"]) {
      assert.ok(key in run, `missing ${key}`);
    }
    assert.deepEqual(Object.keys(run.step_latency_ms).slice(0, 3), ["p50", "p95", "p99"]);
    assert.equal(run.backends.length, 2, "engine truth per backend");
    assert.ok("preemptions" in run.backends[0] && "prefix_cache_hit_rate" in run.backends[0]);
    assert.ok(Array.isArray(run.series.backends[0].kv_usage));
  }
  assert.match(stdout, /steps\/min/);
  assert.match(stdout, /engine preemptions/);
  assert.match(
    stdout,
    /ageing 240 s, max pause 300 s/,
    "the bounds tr ran with: the default preset",
  );
  assert.match(readFileSync(svg, "utf8"), /^<svg/);
  const page = readFileSync(html, "utf8");
  assert.match(page, /^<!doctype html>/);
  assert.equal((page.match(/id="kv-\d"/g) ?? []).length, 2, "KV over time for each run");
});

test("maitred simulate --programs 2 reports the batch's makespan in the table, JSON and page", async () => {
  const dir = mkdtempSync(join(tmpdir(), "maitred-simulate-"));
  const json = join(dir, "out.json");
  const html = join(dir, "out.html");
  const args = ["simulate", "--router", "default", "--concurrency", "2", "--programs", "2"];
  const small = ["--workload", "swe-bash", "--num-backends", "1", "--num-gpu-blocks", "2000"];
  const { code, stdout } = await runMaitred([...args, ...small, "--json", json, "--html", html]);
  assert.equal(code, 0);
  const [run] = JSON.parse(readFileSync(json, "utf8")).runs;
  assert.equal(run.programs_started, 2);
  assert.equal(run.batch.completed, 2);
  assert.equal(run.batch.makespan_ms, run.window_ms.end, "the run ends with its batch");
  assert.equal(run.program_completion_ms.count, 2);
  assert.match(stdout, /batch makespan \(s\)\s+[\d.]+\n/);
  assert.match(stdout, /program completion p95 \(s\)/);
  assert.match(readFileSync(html, "utf8"), /id="completion"/);
});

test("maitred simulate with a bad flag exits 2 and names the flag", async () => {
  const r = await runMaitred(["simulate", "--concurrency", "-3"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--concurrency/);
});

test("maitred simulate --tool-time-scale 0 exits 2 and names the flag", async () => {
  const r = await runMaitred(["simulate", "--tool-time-scale", "0"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--tool-time-scale/);
});
