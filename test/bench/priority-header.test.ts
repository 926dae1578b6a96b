import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { runBench } from "../../src/bench/run-bench.ts";
import { createVirtualClock } from "../../src/runtime/clock.ts";
import { parseWorkloadArg } from "../../src/workload/load-workload.ts";
import { createWorkload } from "../../src/workload/workload.ts";

/**
 * A fake OpenAI server that records what the bench sends: each completion's `x-priority`
 * header and program id. It streams a two-token answer with usage; the very first completion
 * is answered 503 as a preempted one (`x-maitred-preempted: true`).
 */
interface Seen {
  programId: string;
  priority: string | undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      text += c;
    });
    req.on("end", () => resolve(text));
  });
}

function fakeServer(seen: Seen[]): Server {
  let first = true;
  return createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.url !== "/v1/chat/completions") {
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    }
    const json = JSON.parse(body) as { program_id: string; stream: boolean };
    seen.push({ programId: json.program_id, priority: req.headers["x-priority"] as string });
    if (first) {
      first = false;
      const error = {
        message: "preempted",
        type: "ServiceUnavailableError",
        param: null,
        code: 503,
      };
      res.writeHead(503, {
        "content-type": "application/json",
        "retry-after": "0",
        "x-maitred-preempted": "true",
      });
      res.end(JSON.stringify({ error }));
      return;
    }
    assert.equal(json.stream, true, "the bench streams to see its first token");
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: object) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`;
    res.write(chunk({ role: "assistant", content: "" }));
    res.write(chunk({ content: "ok" }));
    const usage = { prompt_tokens: 10, completion_tokens: 1 };
    res.end(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`);
  });
}

describe("the bench sends each program's class", () => {
  const seen: Seen[] = [];
  let server: Server;
  let url: string;
  before(async () => {
    server = fakeServer(seen);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("as x-priority (none without a class), records TTFT, and retries a preemption", async () => {
    const workload = createWorkload(
      parseWorkloadArg("mix:chat@interactive=1,search-agent=1", { seed: 2 }),
    );
    // Tool and think times pass on a virtual clock: jumps, once the answers are in.
    const clock = createVirtualClock();
    const { report, records } = await runBench({
      router: "fake",
      url,
      workload,
      model: "m",
      concurrency: 2,
      timeScale: 1,
      clock,
      warmupMs: 0,
      maxPrograms: 4,
    }).finally(() => clock.stop());
    const classOf = new Map(records.programs.map((p) => [p.programId, p.priorityClass]));
    assert.equal(new Set(classOf.values()).size, 2, "both components ran");
    assert.ok(seen.length > 4);
    for (const s of seen) {
      assert.equal(s.priority, classOf.get(s.programId), `program ${s.programId}`);
    }
    assert.deepEqual(report.errors, { http_503_preempted: 1 });
    assert.equal(report.programs_failed, 0, "the preempted step was retried");
    assert.equal(records.steps.length, seen.length - 1);
    for (const s of records.steps) {
      const t = s.firstTokenMs as number;
      assert.ok(t >= s.startMs && t <= s.endMs, `TTFT of ${s.programId}/${s.stepIndex}`);
    }
    assert.ok(report.classes.interactive && report.classes.default);
  });
});
