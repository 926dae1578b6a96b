/**
 * The HAProxy pass of `npm run bench:cells`: three cells of two simulated backends, every one
 * its own process, behind HAProxy; a closed loop through HAProxy's address with no client
 * retries (OpenAI clients would retry, and hide what was lost); cell-b's `serve` killed with
 * SIGKILL after `stable` (its backends stay up) and restarted on its port, empty, after
 * `dead`; then the latency HAProxy adds, with the load stopped, and the hash's map for every
 * program id (ring-probe.ts). Returns what it measured; stops what it started.
 */
import { availableParallelism } from "node:os";
import { wallClock } from "../../runtime/clock.ts";
import { limitContext, loadWorkload, parseWorkloadArg } from "../../workload/load-workload.ts";
import type { Workload } from "../../workload/types.ts";
import { abortableSleep, startClosedLoop, streamsAt } from "../closed-loop.ts";
import { discoverModel } from "../discover-model.ts";
import { createStepClient } from "../step-client.ts";
import { programIndex, traceClient } from "../trace-client.ts";
import { clockSkew, LOG_LAG_MS, startBenchHaproxy } from "./bench-haproxy.ts";
import { type CpuSample, sum } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import type { Closers } from "./closers.ts";
import { cpuOf, takeSample } from "./cpu-sample.ts";
import { f0 } from "./format.ts";
import { measureLatency } from "./latency.ts";
import type { ProgressLog } from "./progress-log.ts";
import { probeRing } from "./ring-probe.ts";
import type { CellsSettings } from "./spec.ts";
import { type CellsStack, cellsStack, type Proc, startCellBackends } from "./stack.ts";
import { CELLS, PROGRAM_PREFIX, VICTIM, VICTIM_NAME } from "./stack-shape.ts";

/** A request still unanswered this long past `--max-pause` after the run ended is hung. */
const DRAIN_MARGIN_MS = 30_000;

/** What the lone-router pass reuses of the HAProxy pass. */
export interface CellsPass {
  run: CellsRun;
  stack: CellsStack;
  workload: Workload;
  model: string;
  /** Whether a program streams, fixed by its workload index (the same in every pass). */
  streams: (programId: string) => boolean;
}

const never = new AbortController().signal;
const sleep = (ms: number) => abortableSleep(wallClock, ms, never);
const sleepUntil = (at: number) => sleep(at - wallClock.now());

export async function runCells(
  s: CellsSettings,
  closers: Closers,
  log: ProgressLog,
): Promise<CellsPass> {
  const spec = parseWorkloadArg(s.workload, { seed: s.seed });
  const stack = cellsStack(s, closers);
  const streams = (id: string) => streamsAt(programIndex(id), s.streamShare);
  // HAProxy's time (the system clock) minus the driver's; the rest is measured (clockSkew).
  const clockOffsetMs = Date.now() - wallClock.now();

  // 1. Three cells, two backends each, every one its own process.
  log("starting 6 simulated backends and 3 cells");
  const { backends, urls: backendUrls } = await startCellBackends(stack);
  const cells: Proc[] = [];
  for (let c = 0; c < CELLS.length; c++) {
    cells.push(await stack.startCell(CELLS[c], backendUrls[c], 0));
  }
  const cellPort = cells.map((p) => Number(new URL(p.url).port));
  const target = await discoverModel(cells[0].url);
  if (target === null) throw new Error(`no model served at ${cells[0].url}`);
  const workload = await loadWorkload(
    target.maxModelLen ? limitContext(spec, target.maxModelLen) : spec,
  );

  // 2. HAProxy in front of them, once its checks have passed on all three.
  const hap = await startBenchHaproxy(
    {
      cells: CELLS.map((name, c) => ({ name, address: `127.0.0.1:${cellPort[c]}` })),
      bodyBufferBytes: s.bodyBufferBytes,
      noTrim: s.haproxyNoTrim,
      logFile: s.haproxyLog,
      clockOffsetMs,
    },
    closers,
  );
  await hap.waitAllUp(CELLS);
  const skewBefore = await clockSkew(hap, "before");
  log(`HAProxy ${hap.url} sees ${CELLS.join(", ")} UP; load starts`);

  // 3–4. The closed loop through HAProxy; cell-b killed after `stable`, restarted after `dead`.
  // maitred seats every held request within --max-pause.
  const drainMs = stack.routerConfig.maxPauseMs + DRAIN_MARGIN_MS;
  const traced = traceClient(
    createStepClient({ url: hap.url, connections: s.concurrency }),
    drainMs,
    streams,
  );
  let deadCellsCpu = 0;
  const samples: CpuSample[] = [];
  const sample = () => {
    const cellsCpu = deadCellsCpu + sum(cells.map((c) => cpuOf(c.pid)));
    samples.push(
      takeSample(
        backends.map((b) => b.pid),
        cellsCpu,
        hap.pid,
      ),
    );
  };
  const t0 = wallClock.now();
  sample();
  const loop = startClosedLoop({
    workload,
    client: traced.client,
    model: target.id,
    concurrency: s.concurrency,
    timeScale: s.timeScale,
    warmupMs: s.warmupMs,
    durationMs: 3 * s.phaseMs,
    maxRetries: 0,
    // Whether a program streams is traceClient's choice, by its index.
    streamShare: 1,
    programIdPrefix: PROGRAM_PREFIX,
  });
  const stableAt = t0 + s.warmupMs;
  await sleepUntil(stableAt);
  sample();
  log("stable phase");
  await sleepUntil(stableAt + s.phaseMs);
  sample();
  deadCellsCpu += cpuOf(cells[VICTIM].pid);
  const killAt = wallClock.now();
  await cells[VICTIM].kill();
  log(`${VICTIM_NAME} killed (SIGKILL); dead phase`);
  await sleepUntil(stableAt + 2 * s.phaseMs);
  sample();
  const restartAt = wallClock.now();
  cells[VICTIM] = await stack.startCell(VICTIM_NAME, backendUrls[VICTIM], cellPort[VICTIM]);
  const readyAt = wallClock.now();
  log(`${VICTIM_NAME} restarted, ready after ${f0(readyAt - restartAt)} ms; back phase`);
  await sleepUntil(stableAt + 3 * s.phaseMs);
  sample();
  const records = await loop.done;
  const endAt = t0 + records.endMs;
  await traced.client.close();
  log("load stopped");

  // 5. The latency HAProxy adds, with the load stopped, on a program id the hash gives cell-a.
  await hap.waitAllUp(CELLS);
  const latency = await measureLatency({
    directUrl: cells[0].url,
    viaUrl: hap.url,
    cell: CELLS[0],
    model: target.id,
    requests: hap.requests,
    smallRequests: s.latencyRequests,
    largeRequests: s.largeRequests,
    cpuSeconds: () => cpuOf(hap.pid),
    log,
  });
  await sleep(LOG_LAG_MS);
  const skewAfter = await clockSkew(hap, "after");
  // HAProxy's log on this process's clock.
  const hapRequests = hap.requests.map((r) => ({
    ...r,
    startMs: r.startMs - skewBefore,
    sentMs: r.sentMs - skewBefore,
    endMs: r.endMs - skewBefore,
  }));
  const hapEvents = [...hap.events];
  await closers.closeAll();
  log("HAProxy, cells and backends stopped");

  // The hash's map for every program id the run launched (and as many again for the lone pass).
  const maxIndex = Math.max(...records.programs.map((p) => programIndex(p.programId)));
  const probeCount = 2 * (maxIndex + 1) + 100;
  log(`probing HAProxy's ring for ${probeCount} program ids`);
  const ids = Array.from({ length: probeCount }, (_, i) => `${PROGRAM_PREFIX}p${i}`);
  const ring = await probeRing(
    { names: CELLS, ids, bodyBufferBytes: s.bodyBufferBytes, noTrim: s.haproxyNoTrim },
    closers,
  );

  const run: CellsRun = {
    settings: s,
    workloadName: workload.name,
    cpuCount: availableParallelism(),
    t0,
    stableAt,
    killAt,
    restartAt,
    readyAt,
    endAt,
    drainMs,
    records,
    attempts: traced.attempts,
    samples,
    hapRequests,
    hapEvents,
    skewBefore,
    skewAfter,
    latency,
    ids,
    ring,
  };
  return { run, stack, workload, model: target.id, streams };
}
