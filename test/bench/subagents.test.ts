import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, afterEach, before, describe, it } from "node:test";
import { startClosedLoop } from "../../src/bench/closed-loop.ts";
import {
  createStepClient,
  type StepClient,
  type StepRequest,
} from "../../src/bench/step-client.ts";
import { chatPromptTokens } from "../../src/engine/chat-template.ts";
import { createVirtualClock, type VirtualClock } from "../../src/runtime/clock.ts";
import type { Workload } from "../../src/workload/types.ts";
import { TREE_WORKLOAD } from "../workload/tree-workload.ts";

describe("subagents", () => {
  const tree = TREE_WORKLOAD;

  const clocks: VirtualClock[] = [];
  afterEach(() => {
    for (const c of clocks.splice(0)) c.stop();
  });

  /** A fake backend on a virtual clock: every answer takes 1 s; `fail` names requests to 400. */
  function fakeClient(clock: VirtualClock, fail: (r: StepRequest) => boolean = () => false) {
    const sent: { req: StepRequest; at: number }[] = [];
    const released: { id: string; at: number }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const client: StepClient = {
      async send(req) {
        sent.push({ req, at: clock.now() });
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await new Promise<void>((resolve) => clock.setTimeout(resolve, 1000));
        inFlight--;
        if (fail(req)) return { ok: false, kind: "http_400", status: 400, retryAfterMs: null };
        return {
          ok: true,
          promptTokens: chatPromptTokens(req.messages, { addGenerationPrompt: true }).length,
          cachedTokens: 0,
          completionTokens: req.maxTokens,
          pausedMs: 0,
          text: undefined,
        };
      },
      async release(id) {
        released.push({ id, at: clock.now() });
        return true;
      },
      async close() {},
    };
    return { client, sent, released, maxInFlight: () => maxInFlight };
  }

  function run(workload: Workload, fail?: (r: StepRequest) => boolean) {
    const clock = createVirtualClock();
    clocks.push(clock);
    const fake = fakeClient(clock, fail);
    const loop = startClosedLoop({
      workload,
      client: fake.client,
      model: "m",
      concurrency: 1,
      maxPrograms: 1,
      programIdPrefix: "r-",
      clock,
    });
    return { ...fake, done: loop.done };
  }

  describe("sub-agents in the bench's closed loop", () => {
    it("run side by side with x-parent-program-id while the parent waits for the last", async () => {
      const { done, sent, released, maxInFlight } = run(tree);
      const records = await done;
      assert.deepEqual(
        sent.map((s) => [s.req.programId, s.at, s.req.parentProgramId]),
        [
          ["r-p0", 0, undefined],
          ["r-p0.c0", 1000, "r-p0"],
          ["r-p0.c1", 1000, "r-p0"],
          ["r-p0.c0", 4000, "r-p0"],
          ["r-p0.c1", 4000, "r-p0"],
          ["r-p0", 5500, undefined],
        ],
      );
      assert.equal(maxInFlight(), 2, "both sub-agents in flight at once");
      assert.deepEqual(
        released.map((r) => [r.id, r.at]),
        [
          ["r-p0.c0", 5000],
          ["r-p0.c1", 5000],
          ["r-p0", 6500],
        ],
      );
      assert.deepEqual(
        records.programs.map((p) => [p.programId, p.outcome]),
        [["r-p0", "completed"]],
      );
      assert.deepEqual(
        records.subagents?.map((p) => [p.programId, p.parentProgramId, p.outcome]),
        [
          ["r-p0.c0", "r-p0", "completed"],
          ["r-p0.c1", "r-p0", "completed"],
        ],
      );
      assert.equal(records.steps.length, 6, "sub-agents' calls are steps");
      // Each sub-agent's conversation opens with its parent's first prompt's messages.
      const first = sent[0].req.messages;
      for (const s of sent.slice(1, 3)) assert.deepEqual(s.req.messages.slice(0, 2), first);
    });

    it("with the link off the same sub-agents go without a parent", async () => {
      const { done, sent } = run({ ...tree, subagentLink: false });
      await done;
      assert.equal(sent.length, 6);
      assert.ok(sent.every((s) => s.req.parentProgramId === undefined));
    });

    it("a failed sub-agent lets its parent go on as soon as the other ends, with no back-off", async () => {
      const { done, sent } = run(tree, (r) => r.programId === "r-p0.c0");
      const records = await done;
      assert.deepEqual(
        records.subagents?.map((p) => [p.programId, p.outcome]),
        [
          ["r-p0.c0", "failed"],
          ["r-p0.c1", "completed"],
        ],
      );
      assert.equal(sent.at(-1)?.at, 5500);
      assert.equal(records.programs[0].outcome, "completed");
    });
  });

  describe("the step client", () => {
    const headers: IncomingHttpHeaders[] = [];
    let server: Server;
    let url: string;
    before(async () => {
      server = createServer((req, res) => {
        headers.push(req.headers);
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              choices: [{ index: 0, message: { role: "assistant", content: "ok" } }],
              usage: { prompt_tokens: 3, completion_tokens: 1 },
            }),
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("sends a sub-agent's parent as x-parent-program-id, and no such header otherwise", async () => {
      const client = createStepClient({ url, connections: 1 });
      const base = {
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        maxTokens: 1,
        stream: false,
      };
      const signal = new AbortController().signal;
      try {
        assert.ok(
          (await client.send({ ...base, programId: "p1.c0", parentProgramId: "p1" }, signal)).ok,
        );
        assert.ok((await client.send({ ...base, programId: "p1" }, signal)).ok);
      } finally {
        await client.close();
      }
      assert.equal(headers[0]["x-parent-program-id"], "p1");
      assert.equal(headers[1]["x-parent-program-id"], undefined);
    });
  });
});
