/**
 * The first part of `npm run bench:cells`'s report, as lines: what ran, when HAProxy saw the
 * victim go and come back, the hash's balance, each phase's requests, steps and losses, the
 * failures by kind, what was lost at the kill, and the CPU per phase.
 */
import { CHECK_INTERVAL_MS } from "../../cells/haproxy-config.ts";
import { renderTable } from "../table-cells.ts";
import { cpuShares, inWindow } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import type { CellsFigures } from "./figures.ts";
import { f0, f1, f3, sec } from "./format.ts";
import { BACKENDS_PER_CELL, CELLS, VICTIM_NAME } from "./stack-shape.ts";

/** What ran, HAProxy's view of the kill and the restart, and the hash's balance. */
export function headerLines(run: CellsRun, f: CellsFigures): string[] {
  const s = run.settings;
  const { downEv, upEv, downAt, upAt } = f.windows;
  const { killAt, restartAt, readyAt } = run;
  const launched = CELLS.map((c) =>
    run.records.programs.filter((p) => f.ringOf(p.programId) === c),
  );
  const probeCount = run.ids.length;
  const share = (c: string) => (100 * run.ids.filter((i) => f.ringOf(i) === c).length) / probeCount;
  return [
    `3 cells, each maitred serve --router tr + ${BACKENDS_PER_CELL} simulated backends (${s.profile}, time scale ${s.timeScale}, ${s.numGpuBlocks} GPU blocks), behind HAProxy ` +
      `(maitred cells haproxy-config, plus a log line per request); ${s.concurrency} programs of ${run.workloadName} (seed ${s.seed}), ` +
      `${Math.round(s.streamShare * 100)} % streamed, closed loop, no client retries. Warmup ${sec(s.warmupMs)}, then stable, dead, back ${sec(s.phaseMs)} each: ` +
      `${VICTIM_NAME}'s serve killed (SIGKILL, its backends kept) at the end of stable, restarted on its port at the end of dead. ${run.cpuCount} CPUs.` +
      ` HAProxy's buffer (--body-buffer) ${s.bodyBufferBytes} bytes.` +
      (s.haproxyNoTrim ? " HAProxy runs with glibc's heap trimming off (--haproxy-no-trim)." : ""),
    `HAProxy logged ${VICTIM_NAME} DOWN ${downEv ? `${f0(downAt - killAt)} ms after the kill` : "never (3 checks assumed)"}; ` +
      `the restarted ${VICTIM_NAME} was ready ${f0(readyAt - restartAt)} ms after the restart began, logged UP ${upEv ? `${f0(upAt - restartAt)} ms after it` : "never (3 checks assumed)"}. ` +
      `Health checks every ${CHECK_INTERVAL_MS} ms, fall 2, rise 2. ` +
      `HAProxy's log clock ran ${f1(run.skewBefore)} ms ahead of the driver's before the load, ${f1(run.skewAfter)} ms after it (the log is read shifted by the first).`,
    `programs per cell (the hash's balance): ${CELLS.map((c, i) => `${c} ${launched[i].length}`).join(", ")} of ${run.records.programs.length} launched; ` +
      `of ${probeCount} ids: ${CELLS.map((c) => `${c} ${f1(share(c))} %`).join(", ")}. ` +
      `(The map is read from a second HAProxy with the same configuration in front of stub cells; it agrees with the run's log on ${f.agreement.agree} of ${f.agreement.seen} programs answered before the kill.)`,
  ];
}

/** Per phase: requests, steps, losses and HAProxy's retries; the drain; the kill's losses. */
export function phaseLines(run: CellsRun, f: CellsFigures): string[] {
  const { attempts } = run;
  const hung = attempts.filter((x) => x.outcome === "hung").length;
  const drained = attempts.filter((x) => x.afterStop);
  const k = f.kill;
  return [
    "",
    "per phase (the driver's requests and steps; a loss where it was seen, a hung request where it was sent; HAProxy's retries from its log, where the request was sent)",
    renderTable(
      [
        "phase",
        "length",
        "requests sent",
        "steps answered",
        "steps/min",
        "lost: error status",
        "lost: cut mid-stream",
        "hung",
        "HAProxy retries",
      ],
      f.phases.map((p) => [
        p.name,
        p.lengthMs === null ? "drain" : sec(p.lengthMs),
        String(p.sent),
        p.steps === null ? "-" : String(p.steps),
        p.stepsPerMin === null ? "-" : f1(p.stepsPerMin),
        String(p.errorStatus),
        String(p.cut),
        String(p.hung),
        String(p.retries),
      ]),
    ),
    `requests in flight when the run ended: ${drained.length + hung}; ` +
      `${drained.filter((x) => x.outcome === "ok").length} answered, ${drained.filter((x) => x.outcome === "failed").length} failed within the ${sec(run.drainMs)} drain, ` +
      `${hung} hung; ${attempts.filter((x) => x.outcome === "pending").length} never settled`,
    ...[...f.kinds].map(([kind, n]) => `  failed: ${n} × ${kind}`),
    `at the kill ${k.wereInFlight.length} requests were in flight, ${k.onVictim.length} of them on ${VICTIM_NAME} ` +
      `(${k.onVictim.filter((x) => x.stream).length} streamed): ${k.lostAtKill.length} failed, ${k.savedByRetry.length} answered by another cell after HAProxy retried them there ` +
      `(${k.savedByRetry.filter((x) => x.stream).length} streamed). Failures of any other request: ${k.lostElse.length}.`,
  ];
}

/** Each part's CPU per phase, and HAProxy's per request. */
export function cpuLines(run: CellsRun, f: CellsFigures): string[] {
  const { samples } = run;
  return [
    "",
    `CPU per phase (% of one CPU, from /proc/<pid>/stat; the machine's busy share of all ${run.cpuCount} CPUs from /proc/stat; other: the rest of the machine)`,
    renderTable(
      [
        "phase",
        "machine busy %",
        "6 backends",
        "3 cells",
        "HAProxy",
        "driver",
        "other",
        "HAProxy requests",
        "HAProxy CPU ms/request",
      ],
      f.windows.phases.map((w, k) => {
        const s0 = samples[k];
        const s1 = samples[k + 1];
        const c = cpuShares(s0, s1, w.to - w.from, run.cpuCount);
        const n = run.hapRequests.filter((r) => inWindow(r.startMs, w)).length;
        return [
          w.name,
          f0(c.machine),
          f1(c.backends),
          f1(c.cells),
          f1(c.haproxy),
          f1(c.driver),
          f1(c.other),
          String(n),
          f3(((s1.haproxy - s0.haproxy) * 1000) / Math.max(1, n)),
        ];
      }),
    ),
  ];
}
