/**
 * One soak (`npm run soak`): the fleet (fleet.ts) started, driven by a closed loop of agent
 * programs at a high time scale for a wall time, faults done on their seeded schedule
 * (schedule.ts, faults.ts), the router's invariants checked every few seconds from its own
 * endpoints (sampler.ts, invariants.ts), its memory and CPU sampled all along. Once load stops
 * and the fleet has drained, the end checks: nothing left, the books at zero, the access log
 * against the requests sent, every failure explained by a fault. Violations are said as they
 * are found; the outcome is what report.ts writes.
 */
import { createWriteStream, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { limitContext, loadWorkload, parseWorkloadArg } from "../../workload/load-workload.ts";
import type { Workload } from "../../workload/types.ts";
import { startClosedLoop } from "../closed-loop.ts";
import { discoverModel } from "../discover-model.ts";
import type { RunRecords } from "../records.ts";
import { createStepClient } from "../step-client.ts";
import { type CpuSets, pin } from "./cpus.ts";
import { type FaultContext, type FaultRun, faultLine, faultRuns, runFault } from "./faults.ts";
import { createFleet, procStats, type SoakRouter } from "./fleet.ts";
import {
  accessCountText,
  accessLogViolation,
  attributeFailures,
  drainedViolations,
  heldTooLong,
  type RouterSample,
} from "./invariants.ts";
import {
  type AccessTally,
  accessCounts,
  CHAT_PATH,
  countedClient,
  createAccessTally,
  createLedger,
  tallyAccessLine,
} from "./ledger.ts";
import { type SoakOutcome, soakHeader } from "./report.ts";
import { createSampler, type Sampler } from "./sampler.ts";
import { faultLengths, faultSchedule } from "./schedule.ts";
import type { SoakSettings } from "./spec.ts";
import { createSoakState, noteDrift, onRouter, sinceText, violate } from "./state.ts";
import { soakMix, writeShortTrace } from "./workload.ts";

const MS = 1000;
/** Once load stops, how long past the idle timeout /programs gets to empty. */
const DRAIN_SLACK_MS = 30 * MS;
/** How often /programs is read while it empties. */
const DRAIN_POLL_MS = 2 * MS;
/** The routers' last access log lines are written this soon after their answers. */
const LOG_SETTLE_MS = 2 * MS;
/** Unexplained failures said one by one; the rest are counted. */
const UNEXPLAINED_SHOWN = 20;
/** Samples between two status lines. */
const STATUS_EVERY = 12;

export interface SoakRunOptions {
  /** `--router-cpus`: the router's CPUs and the others; null: no pinning. */
  cpus: CpuSets | null;
  /** Where its lines go: the header, status lines, faults, violations, the access log counts. */
  log: (line: string) => void;
}

/** Run one soak; its processes are stopped whatever happens. */
export async function runSoak(s: SoakSettings, o: SoakRunOptions): Promise<SoakOutcome> {
  pin(process.pid, o.cpus?.others);
  // Before any process starts: a schedule that does not fit stops the soak with nothing to clean.
  const schedule = faultSchedule({
    seed: s.seed,
    durationMs: s.durationMs,
    warmupMs: s.warmupMs,
    tailMs: s.tailMs,
    backends: s.totalBackends,
    cells: s.cells,
    perKind: s.faultsPerKind,
    lengthMs: faultLengths({ ...s, perKind: s.faultsPerKind }),
  });
  const dir = mkdtempSync(join(tmpdir(), "maitred-soak-"));
  const logFile = s.logFile ?? join(dir, "router.log");
  const shortTrace = join(dir, "soak-short.jsonl");
  writeShortTrace(shortTrace, s.seed);
  /** Every line the routers log, in one file (`--log-file`). */
  const logOut = createWriteStream(logFile);
  const tally = createAccessTally();
  const fleet = createFleet(s, {
    dir,
    cpus: o.cpus,
    onLine: (line) => {
      logOut.write(`${line}\n`);
      tallyAccessLine(tally, line, s.maxPauseMs);
    },
  });
  try {
    await fleet.start();
    const st = createSoakState(Date.now(), o.log);
    const served = await discoverModel(fleet.entryUrl);
    if (served === null) throw new Error(`no model served at ${fleet.entryUrl}`);
    st.model = served.id;
    const spec = {
      ...parseWorkloadArg(soakMix(s.traceShare, shortTrace), { seed: s.seed }),
      unreleased: s.unreleased,
    };
    const workload = await loadWorkload(
      served.maxModelLen ? limitContext(spec, served.maxModelLen) : spec,
    );
    for (const line of soakHeader(s, schedule, logFile, o.cpus)) o.log(line);
    const cx: FaultContext = {
      settings: s,
      fleet,
      ledger: createLedger(),
      state: st,
      burst: { client: null },
    };
    const runs = faultRuns(
      schedule,
      st.t0,
      fleet.backends.map((b) => b.url),
    );
    const sampler = createSampler(fleet, cx.ledger, st, s.cells);
    const { records, loadEnd, stopSampling } = await load(cx, workload, runs, sampler);
    const last = await drain(cx, sampler, loadEnd);
    stopSampling();
    await sampler.take();
    for (const { rt, s: sample } of last) {
      noteDrift(st, sample);
      violate(st, onRouter(s.cells, rt.name, drainedViolations(sample)));
    }
    return await endChecks(cx, { records, loadEnd, runs, last, tally });
  } finally {
    await fleet.close();
    logOut.end();
  }
}

/** The closed loop for `--minutes`, the faults on their schedule, a sample every few seconds. */
async function load(
  cx: FaultContext,
  workload: Workload,
  runs: readonly FaultRun[],
  sampler: Sampler,
): Promise<{ records: RunRecords; loadEnd: number; stopSampling: () => void }> {
  const { settings: s, fleet, state: st } = cx;
  const client = countedClient(
    createStepClient({ url: fleet.entryUrl, connections: s.concurrency * 2 }),
    cx.ledger,
  );
  const loop = startClosedLoop({
    workload,
    client,
    model: st.model,
    concurrency: s.concurrency,
    timeScale: s.timeScale,
    warmupMs: 0,
    durationMs: s.durationMs,
    maxRetries: 0,
    streamShare: s.streamShare,
    programIdPrefix: "soak-",
  });
  st.loopPrograms = () => loop.progress().programsStarted;
  const pending = runs.map((run, i) =>
    sleep(run.fault.atMs).then(async () => {
      run.window.startMs = Date.now();
      st.log(faultLine(run.fault, fleet.cellNames, sinceText(st.t0, run.window.startMs)));
      await runFault(cx, run, `f${i}`).catch((err: Error) => {
        run.note = `failed: ${err.message}`;
      });
      run.window.endMs = Math.max(run.window.endMs, Date.now());
    }),
  );
  const timer = setInterval(() => {
    const p = loop.progress();
    void sampler.take();
    if (st.samples.length % STATUS_EVERY === 0)
      st.log(
        `${sinceText(st.t0, Date.now())} programs ${p.programsStarted}, steps ${p.stepsCompleted}, errors ${p.errors}, live ${st.lastPrograms.length}, router RSS ${st.samples.at(-1)?.rss_mb?.toFixed(0) ?? "n/a"} MB`,
      );
  }, s.sampleMs);
  const records = await loop.done;
  await Promise.all(pending);
  await client.close();
  await cx.burst.client?.close();
  return { records, loadEnd: Date.now(), stopSampling: () => clearInterval(timer) };
}

type Sampled = { rt: SoakRouter; s: RouterSample }[];

/**
 * Once load stops: programs are released by their clients or idle-timed-out, and the tick
 * releases them; wait for /programs to empty, up to the idle timeout and some slack.
 */
async function drain(cx: FaultContext, sampler: Sampler, loadEnd: number): Promise<Sampled> {
  const { settings: s, state: st } = cx;
  st.log(
    `\n${sinceText(st.t0, loadEnd)} load stopped; waiting for the idle timeout (${s.idleTimeoutMs / MS} s) to empty /programs`,
  );
  const left = (xs: Sampled) => xs.reduce((t, x) => t + x.s.programs.length, 0);
  let last = await sampler.routerSamples();
  while (left(last) > 0 && Date.now() < loadEnd + s.idleTimeoutMs + DRAIN_SLACK_MS) {
    await sleep(DRAIN_POLL_MS);
    last = await sampler.routerSamples();
  }
  return last;
}

/**
 * The access log against the requests sent, each failure held to the faults, the holds to the
 * max pause; then the figures only the live processes can give (CPU), into the outcome.
 */
async function endChecks(
  cx: FaultContext,
  r: { records: RunRecords; loadEnd: number; runs: FaultRun[]; last: Sampled; tally: AccessTally },
): Promise<SoakOutcome> {
  const { settings: s, fleet, ledger, state: st } = cx;
  // The access log: one line per request sent (wait for the last lines to be written).
  await sleep(LOG_SETTLE_MS);
  const hap = fleet.hap;
  const cellKills = r.runs.filter((x) => x.fault.kind === "kill-cell").map((x) => x.window);
  const retried = hap === null ? 0 : await hap.retries();
  const counts = accessCounts(ledger, r.tally, {
    retried,
    behindHaproxy: hap !== null,
    cellKills,
    graceMs: s.graceMs,
  });
  for (const c of counts) {
    const v = accessLogViolation(c, Date.now());
    if (v !== null) violate(st, [v]);
    else st.log(`access log ${accessCountText(c)}`);
  }
  const windows = r.runs.map((x) => x.window);
  const attr = attributeFailures(r.tally.failed, windows, s.graceMs);
  violate(
    st,
    attr.unexplained.slice(0, UNEXPLAINED_SHOWN).map((l) => ({
      atMs: l.endMs,
      invariant: "unexplained-failure" as const,
      detail: `${l.path} ${l.status} ${l.error ?? ""} on ${l.backend ?? "no backend"} (${l.durationMs} ms)`,
    })),
  );
  if (attr.unexplained.length > UNEXPLAINED_SHOWN)
    st.log(`… ${attr.unexplained.length - UNEXPLAINED_SHOWN} more unexplained failures`);
  violate(st, heldTooLong(r.tally.held, s.limits));
  return {
    timeScale: s.timeScale,
    cells: s.cells,
    baselineMs: s.baselineMs,
    graceMs: s.graceMs,
    t0: st.t0,
    loadEnd: r.loadEnd,
    records: r.records,
    programsSeen: st.programsSeen,
    requests: ledger.sent.get(CHAT_PATH) ?? 0,
    samples: st.samples,
    runs: r.runs,
    cellNames: fleet.cellNames,
    explained: attr.explained,
    routerFailures: r.tally.failed.length,
    unexplained: attr.unexplained.length,
    haproxy: hap === null ? null : { cpuS: procStats(hap.pid).cpuS, retried },
    cellOutcomes: fleet.routers.map((rt) => ({
      name: rt.name,
      left: r.last.find((x) => x.rt === rt)?.s.programs.length ?? 0,
      cpuS: (procStats(rt.pid).cpuS ?? 0) + rt.cpuBeforeS,
      restarts: rt.restarts,
    })),
    drift: st.drift,
    violations: st.violations,
  };
}
