import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import {
  type IdleGpuResult,
  idleGpuLines,
  runAgent,
  type StepResult,
} from "../../../src/bench/scenarios/idle-gpu.ts";

interface Seen {
  path: string;
  body: { program_id: string; messages?: { role: string; content: string }[] };
}

/**
 * A stand-in for the router's two routes the agent uses: a chat answer (held `pausedMs`, or
 * an error on the step named `failStep`), and the release.
 */
async function fakeRouter(o: { pausedMs: number; failStep?: number }) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (d) => {
      text += d;
    });
    req.on("end", () => {
      const body = JSON.parse(text);
      seen.push({ path: req.url ?? "", body });
      if (req.url === "/programs/release") return res.end("{}");
      const step = seen.filter((s) => s.path === "/v1/chat/completions").length - 1;
      if (step === o.failStep) {
        res.writeHead(503, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { message: "no room" } }));
      }
      res.writeHead(200, {
        "content-type": "application/json",
        "x-maitred-paused-ms": String(o.pausedMs),
      });
      res.end(JSON.stringify({ choices: [{ message: { content: `answer ${step}` } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise((r) => server.close(r)) };
}

describe("an idle-gpu agent", () => {
  it("grows its conversation by its answer and a tool's output each step, then releases", async () => {
    const router = await fakeRouter({ pausedMs: 42 });
    let waits = 0;
    try {
      const steps = await runAgent({
        url: router.url,
        name: "b",
        steps: 3,
        release: true,
        toolWait: async () => {
          waits++;
        },
        log: () => assert.fail("no step failed"),
      });
      assert.deepEqual(
        steps.map((s) => [s.agent, s.step, s.status, s.pausedMs]),
        [
          ["b", 0, 200, 42],
          ["b", 1, 200, 42],
          ["b", 2, 200, 42],
        ],
      );
      assert.equal(waits, 3, "a tool wait after every step");
      const chats = router.seen.filter((s) => s.path === "/v1/chat/completions");
      assert.deepEqual(
        chats.map((c) => c.body.messages?.length),
        [1, 3, 5],
      );
      assert.equal(chats[1].body.messages?.[1].content, "answer 0", "the answer is sent back");
      assert.ok(chats.every((c) => c.body.program_id === "b"));
      assert.deepEqual(router.seen.at(-1), {
        path: "/programs/release",
        body: { program_id: "b" },
      });
    } finally {
      await router.close();
    }
  });

  it("never releases agent a, and says a failed step's error", async () => {
    const router = await fakeRouter({ pausedMs: 0, failStep: 1 });
    const said: string[] = [];
    try {
      const steps = await runAgent({
        url: router.url,
        name: "a",
        steps: 2,
        release: false,
        toolWait: async () => {},
        log: (line) => said.push(line),
      });
      assert.deepEqual(
        steps.map((s) => s.status),
        [200, 503],
      );
      assert.deepEqual(said, ["a step 1: no room"]);
      assert.ok(
        router.seen.every((s) => s.path !== "/programs/release"),
        "a was released",
      );
    } finally {
      await router.close();
    }
  });
});

describe("bench:idle-gpu's printing", () => {
  const step = (agent: string, n: number, wallMs: number, pausedMs: number): StepResult => ({
    agent,
    step: n,
    wallMs,
    pausedMs,
    status: 200,
  });
  const r: IdleGpuResult = {
    steps: [step("a", 0, 1234, 0), step("b", 0, 3456, 2500)],
    wallS: 12.34,
    scale: 5,
    tickS: 0.2,
    pauses: 3,
    resumes: 4,
    stateOfA: "PAUSED",
  };

  it("gives each step, then the total in engine seconds and ticks, and the router's counts", () => {
    assert.deepEqual(idleGpuLines(r), [
      "a step 0: 200, 1.23 s wall, held 0 ms",
      "b step 0: 200, 3.46 s wall, held 2500 ms",
      "all 2 steps done in 12.3 s wall = 62 engine s = 61.7 ticks of 0.2 s; longest hold 2500 ms",
      "router: 3 pauses, 4 resumes; agent a (never released) is PAUSED",
    ]);
  });
});
