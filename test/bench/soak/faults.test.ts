import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { parseScriptArgs } from "../../../src/bench/script-args.ts";
import {
  type FaultContext,
  type FaultRun,
  faultLine,
  faultRuns,
  metricsFaultBody,
  runFault,
} from "../../../src/bench/soak/faults.ts";
import type { Backend, Fleet, SoakRouter } from "../../../src/bench/soak/fleet.ts";
import { CHAT_PATH, createLedger, RELEASE_PATH } from "../../../src/bench/soak/ledger.ts";
import type { Fault } from "../../../src/bench/soak/schedule.ts";
import { SOAK_SPEC, soakSettings } from "../../../src/bench/soak/spec.ts";
import { createSoakState } from "../../../src/bench/soak/state.ts";

const fault = (over: Partial<Fault>): Fault => ({
  kind: "kill",
  atMs: 1_000,
  lengthMs: 0,
  backend: 1,
  cell: null,
  ...over,
});

describe("the faults' windows and lines", () => {
  it("places each fault's window from the run's start, on its backend's URL", () => {
    const runs = faultRuns(
      [fault({ lengthMs: 500 }), fault({ kind: "burst", atMs: 3_000, backend: null })],
      10_000,
      ["http://b0", "http://b1"],
    );
    assert.deepEqual(
      runs.map((r) => r.window),
      [
        { id: 0, kind: "kill", startMs: 11_000, endMs: 11_500, backend: "http://b1" },
        { id: 1, kind: "burst", startMs: 13_000, endMs: 13_000, backend: null },
      ],
    );
    assert.deepEqual(
      runs.map((r) => [r.done, r.note]),
      [
        [0, ""],
        [0, ""],
      ],
    );
  });

  it("asks a backend for a bad /metrics as long as the fault, slow past the poll timeout", () => {
    const f = fault({ kind: "metrics-slow", lengthMs: 20_000 });
    assert.deepEqual(metricsFaultBody(f, 1_500), { mode: "slow", seconds: 20, delay_seconds: 3 });
    assert.equal(metricsFaultBody({ ...f, kind: "metrics-garbage" }, 1_500).mode, "garbage");
  });

  it("says what each fault hits: a backend, a cell, or neither", () => {
    const cells = ["cell-a", "cell-b"];
    assert.equal(
      faultLine(fault({ lengthMs: 5_000 }), cells, "3.0 s"),
      "3.0 s fault kill on backend 1 for 5000 ms",
    );
    assert.equal(
      faultLine(fault({ kind: "kill-cell", backend: null, cell: 1 }), cells, "4.0 s"),
      "4.0 s fault kill-cell on cell-b for 0 ms",
    );
    assert.equal(
      faultLine(fault({ kind: "burst", backend: null }), [], "5.0 s"),
      "5.0 s fault burst for 0 ms",
    );
  });
});

describe("doing a fault", () => {
  let server: Server;
  let url = "";
  const seen: { path: string; body: Record<string, unknown> }[] = [];
  const bodyOf = async (req: IncomingMessage) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    return JSON.parse(text) as Record<string, unknown>;
  };
  before(async () => {
    server = createServer(async (req, res) => {
      const body = await bodyOf(req);
      seen.push({ path: req.url ?? "", body });
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: "assistant", content: "ok" } }],
          usage: { prompt_tokens: 3, completion_tokens: 1 },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  /** A fleet of one backend and one cell at the test's server; kills and restarts recorded. */
  function context(argv: string[]) {
    const r = parseScriptArgs(SOAK_SPEC, argv);
    if (r.help) throw new Error("asked for help");
    const calls: string[] = [];
    const proc = { url, pid: 0, close: async () => {}, kill: async () => {} };
    const backend = { url, proc } as Backend;
    const cell = { name: "cell-a" } as SoakRouter;
    const fleet = {
      backends: [backend],
      routers: [cell],
      cellNames: ["cell-a"],
      entryUrl: url,
      killBackend: async () => void calls.push("kill backend"),
      restartBackend: async () => void calls.push("restart backend"),
      killCell: async (rt: SoakRouter) => void calls.push(`kill ${rt.name}`),
      restartCell: async (rt: SoakRouter) => {
        calls.push(`restart ${rt.name}`);
        return 12;
      },
    } as unknown as Fleet;
    const cx: FaultContext = {
      settings: soakSettings(r),
      fleet,
      ledger: createLedger(),
      state: createSoakState(0, () => {}),
      burst: { client: null },
    };
    return { cx, calls };
  }
  const runOf = (f: Fault): FaultRun => faultRuns([f], 0, [url])[0];

  it("kills a backend and starts it again; a cell too, noting when HAProxy saw it back", async () => {
    const { cx, calls } = context([]);
    const kill = runOf(fault({ kind: "kill", backend: 0 }));
    await runFault(cx, kill, "f0");
    const cell = runOf(fault({ kind: "kill-cell", backend: null, cell: 0 }));
    await runFault(cx, cell, "f1");
    assert.deepEqual(calls, ["kill backend", "restart backend", "kill cell-a", "restart cell-a"]);
    assert.deepEqual([kill.done, cell.done], [1, 1]);
    assert.equal(cell.note, "HAProxy saw it UP 12 ms after its restart");
  });

  it("sends a burst of new programs, each one call released, all counted", async () => {
    const { cx } = context(["--burst", "5"]);
    seen.length = 0;
    const run = runOf(fault({ kind: "burst", backend: null }));
    try {
      await runFault(cx, run, "f3");
    } finally {
      await cx.burst.client?.close();
    }
    const chats = seen.filter((s) => s.path === CHAT_PATH).map((s) => s.body.program_id);
    const released = seen.filter((s) => s.path === RELEASE_PATH).map((s) => s.body.program_id);
    const ids = [0, 1, 2, 3, 4].map((i) => `soak-f3-burst-${i}`);
    assert.deepEqual(chats.sort(), ids);
    assert.deepEqual(released.sort(), ids);
    assert.deepEqual([cx.ledger.sent.get(CHAT_PATH), cx.ledger.sent.get(RELEASE_PATH)], [5, 5]);
    assert.equal(cx.state.programsSeen, 5);
    assert.equal(run.done, 1);
  });
});
