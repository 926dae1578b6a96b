/**
 * The soak's faults, each done as schedule.ts says: backends killed, stopped or made to answer
 * `/metrics` badly (POST /sim/metrics-fault on the simulated backend), clients that hang up
 * mid-stream, before the head or while held, bursts of new programs, and with cells a cell's
 * `serve` killed and restarted. Each is kept with its window, which invariants.ts holds the
 * failures it explains to.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_BLOCK_SIZE } from "../../engine/timing.ts";
import { textOfTokens } from "../../engine/tokenizer.ts";
import { createStepClient, type StepClient } from "../step-client.ts";
import type { Fleet } from "./fleet.ts";
import type { FaultWindow } from "./invariants.ts";
import { CHAT_PATH, countedClient, type RequestLedger } from "./ledger.ts";
import type { Fault } from "./schedule.ts";
import type { SoakSettings } from "./spec.ts";
import type { SoakState } from "./state.ts";

/** Requests each disconnect fault sends. */
const DISCONNECTS = 4;
/** Output of a disconnect probe: long enough that it is still running when its client leaves. */
const PROBE_TOKENS = 4000;
/** A plain answer comes whole, so a client gone this soon left before its head. */
const BEFORE_HEAD_MS = 30;
/** A stream with its head and no token this long after is held. */
const HELD_AFTER_MS = 300;
/** Large new programs per backend a held disconnect sends when no program is paused. */
const PRESSURE_PER_BACKEND = 4;
/** How long a mid-stream probe waits for its first token before it gives up. */
const STREAM_WAIT_MS = 10_000;
/** A large program's context, as a share of one backend's KV: at most two fit on a backend. */
const PRESSURE_SHARE = 0.4;

export interface FaultRun {
  fault: Fault;
  window: FaultWindow;
  /** How many times it was done (a held disconnect needs a paused program to hijack). */
  done: number;
  note: string;
}

/** The schedule's faults with their planned windows, from `t0`, on the backends' URLs. */
export function faultRuns(
  schedule: readonly Fault[],
  t0: number,
  backendUrls: readonly string[],
): FaultRun[] {
  return schedule.map((fault, i) => ({
    fault,
    window: {
      id: i,
      kind: fault.kind,
      startMs: t0 + fault.atMs,
      endMs: t0 + fault.atMs + fault.lengthMs,
      backend: fault.backend === null ? null : backendUrls[fault.backend],
    },
    done: 0,
    note: "",
  }));
}

/** The line that says a fault starts. */
export function faultLine(f: Fault, cellNames: readonly string[], since: string): string {
  const on = `${f.backend === null ? "" : ` on backend ${f.backend}`}${f.cell === null ? "" : ` on ${cellNames[f.cell]}`}`;
  return `${since} fault ${f.kind}${on} for ${f.lengthMs} ms`;
}

/** What runs the faults: the fleet, the soak's counts and state, one burst client for all. */
export interface FaultContext {
  settings: SoakSettings;
  fleet: Fleet;
  ledger: RequestLedger;
  state: SoakState;
  burst: { client: StepClient | null };
}

const never = new AbortController().signal;

/**
 * What a `/metrics` fault asks of the simulated backend (POST /sim/metrics-fault): garbage,
 * errors or a slow body for the fault's length; a slow body twice the router's poll timeout,
 * so every poll in the fault times out.
 */
export function metricsFaultBody(f: Fault, pollTimeoutMs: number) {
  return {
    mode: f.kind.slice("metrics-".length),
    seconds: f.lengthMs / 1000,
    delay_seconds: (2 * pollTimeoutMs) / 1000,
  };
}

/**
 * A probe's chat request, sent by fetch so it can be cut where the fault says; `content` is its
 * prompt (a short line unless a fault needs a large context).
 */
function probe(
  cx: FaultContext,
  programId: string,
  stream: boolean,
  signal: AbortSignal,
  content = `soak probe ${programId}`,
): Promise<Response> {
  cx.ledger.count(CHAT_PATH);
  return fetch(`${cx.fleet.entryUrl}${CHAT_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: cx.state.model,
      program_id: programId,
      messages: [{ role: "user", content }],
      max_tokens: PROBE_TOKENS,
      ignore_eos: true,
      stream,
    }),
    signal,
  });
}

/**
 * Send a stream and cut it: held (head, no data), or mid-stream once its first token came
 * (unless `heldOnly`); resolves with where it was cut.
 */
async function cutStream(
  cx: FaultContext,
  programId: string,
  heldOnly: boolean,
  content?: string,
): Promise<"held" | "mid" | "none"> {
  const ctl = new AbortController();
  try {
    const res = await probe(cx, programId, true, ctl.signal, content);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const read = () => Promise.race([reader.read(), sleep(HELD_AFTER_MS).then(() => null)]);
    const first = await read();
    const text = first?.value === undefined ? "" : new TextDecoder().decode(first.value);
    const held = first === null || !text.includes("data:");
    if (held && !heldOnly) {
      // Cut mid-stream: wait for its first token (after the hold, if it was held).
      const end = Date.now() + STREAM_WAIT_MS;
      for (let chunk = first; Date.now() < end; chunk = await read()) {
        if (chunk?.done) break;
        if (chunk?.value !== undefined && new TextDecoder().decode(chunk.value).includes("data:")) {
          ctl.abort();
          return "mid";
        }
      }
    }
    ctl.abort();
    if (heldOnly && !held) return "none";
    return held ? "held" : "mid";
  } catch {
    return "none";
  }
}

/** Clients that leave while their requests are held: paused programs', else large new ones. */
async function disconnectHeld(cx: FaultContext, run: FaultRun, tag: string): Promise<void> {
  const s = cx.settings;
  // Requests of a paused program are held: send one for a paused program and leave.
  const end = Date.now() + run.fault.lengthMs;
  const tried = new Set<string>();
  while (run.done < DISCONNECTS && Date.now() < end) {
    const paused = cx.state.lastPrograms.find(
      (p) => p.state === "paused" && p.inFlight === 0 && !tried.has(p.key),
    );
    if (paused === undefined) break;
    tried.add(paused.key);
    if ((await cutStream(cx, paused.key, true)) === "held") run.done++;
  }
  let pressed = 0;
  if (run.done < DISCONNECTS && s.router === "tr") {
    // No paused program to hijack: make the fleet hold some. New programs whose contexts are
    // each a large share of a backend's KV: at most two fit on a backend, the rest are held (a
    // held stream has its head and comments, no data), and each is cut where it stands.
    const tokens = Math.floor(PRESSURE_SHARE * s.numGpuBlocks * DEFAULT_BLOCK_SIZE);
    pressed = PRESSURE_PER_BACKEND * s.totalBackends;
    // Distinct prompts: one shared prefix would let the engine hold them all at once.
    const cut = await Promise.all(
      Array.from({ length: pressed }, (_, i) =>
        cutStream(cx, `soak-${tag}-held-${i}`, true, textOfTokens(tokens, s.seed * 1000 + i)),
      ),
    );
    cx.state.programsSeen += pressed;
    run.done += cut.filter((c) => c === "held").length;
  }
  run.note = `${tried.size} paused programs tried${pressed > 0 ? `, ${pressed} large new programs sent` : ""}`;
}

/** Do one fault; `tag` makes its probes' program ids its own. */
export async function runFault(cx: FaultContext, run: FaultRun, tag: string): Promise<void> {
  const f = run.fault;
  const b = f.backend === null ? null : cx.fleet.backends[f.backend];
  switch (f.kind) {
    case "kill": {
      if (b === null) return;
      await cx.fleet.killBackend(b);
      run.done++;
      await sleep(f.lengthMs);
      await cx.fleet.restartBackend(b);
      return;
    }
    case "stop": {
      if (b === null) return;
      process.kill(b.proc.pid, "SIGSTOP");
      run.done++;
      await sleep(f.lengthMs);
      process.kill(b.proc.pid, "SIGCONT");
      return;
    }
    case "metrics-garbage":
    case "metrics-error":
    case "metrics-slow": {
      if (b === null) return;
      const res = await fetch(`${b.url}/sim/metrics-fault`, {
        method: "POST",
        body: JSON.stringify(metricsFaultBody(f, cx.settings.pollTimeoutMs)),
      });
      if (res.ok) run.done++;
      else run.note = `control answered ${res.status}`;
      await sleep(f.lengthMs);
      return;
    }
    case "disconnect-mid-stream": {
      const cut = await Promise.all(
        Array.from({ length: DISCONNECTS }, (_, i) => cutStream(cx, `soak-${tag}-mid-${i}`, false)),
      );
      cx.state.programsSeen += DISCONNECTS;
      run.done = cut.filter((c) => c === "mid").length;
      run.note = `${cut.filter((c) => c === "held").length} were held, cut there`;
      return;
    }
    case "disconnect-before-head": {
      await Promise.all(
        Array.from({ length: DISCONNECTS }, async (_, i) => {
          const ctl = new AbortController();
          const p = probe(cx, `soak-${tag}-head-${i}`, false, ctl.signal);
          const got = await Promise.race([
            p.then(
              () => true,
              () => false,
            ),
            sleep(BEFORE_HEAD_MS).then(() => false),
          ]);
          ctl.abort();
          if (!got) {
            run.done++;
            cx.ledger.unanswered(CHAT_PATH);
          }
        }),
      );
      cx.state.programsSeen += DISCONNECTS;
      return;
    }
    case "disconnect-held":
      return disconnectHeld(cx, run, tag);
    case "kill-cell": {
      const rt = cx.fleet.routers[f.cell as number];
      await cx.fleet.killCell(rt);
      run.done++;
      await sleep(f.lengthMs);
      const ms = await cx.fleet.restartCell(rt);
      run.note = `HAProxy saw it UP ${ms} ms after its restart`;
      return;
    }
    case "burst":
      return burst(cx, run, tag);
  }
}

/** Many new programs at once, each one short call and released. */
async function burst(cx: FaultContext, run: FaultRun, tag: string): Promise<void> {
  const size = cx.settings.burst;
  cx.burst.client ??= countedClient(
    createStepClient({ url: cx.fleet.entryUrl, connections: size }),
    cx.ledger,
  );
  const client = cx.burst.client;
  await Promise.all(
    Array.from({ length: size }, async (_, i) => {
      const id = `soak-${tag}-burst-${i}`;
      await client.send(
        {
          programId: id,
          model: cx.state.model,
          messages: [{ role: "user", content: `burst ${i}` }],
          maxTokens: 8,
          stream: false,
        },
        never,
      );
      await client.release(id);
    }),
  );
  cx.state.programsSeen += size;
  run.done = 1;
}
