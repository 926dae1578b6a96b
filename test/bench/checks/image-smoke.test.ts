import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { ImageError } from "../../../src/bench/checks/image-error.ts";
import { smoke, waitStatus } from "../../../src/bench/checks/image-smoke.ts";
import type { Podman } from "../../../src/bench/checks/podman.ts";
import { createVirtualClock } from "../../../src/runtime/clock.ts";

/**
 * A stand-in for the container: /health, plain and streamed chat completions, and a drain that
 * `podman stop` starts: /health and new requests 503, the stream in flight finished.
 */
function fakeContainer() {
  const state = { draining: false, healthCalls: 0, healthyAfter: 0 };
  let held: ServerResponse | null = null;
  const finishStream = () => {
    held?.end('data: {"choices":[{"delta":{"content":" b"}}]}\n\ndata: [DONE]\n\n');
    held = null;
  };
  const server = createServer((req, res) => {
    if (req.url === "/health") {
      state.healthCalls++;
      const up = state.healthCalls > state.healthyAfter && !state.draining;
      return void res.writeHead(up ? 200 : 503).end();
    }
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (state.draining) {
        res.writeHead(503, { "content-type": "application/json" });
        return void res.end('{"error":{"code":"cell_draining"}}');
      }
      if (!(JSON.parse(body) as { stream?: boolean }).stream) {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end('{"choices":[{"message":{"content":"hello there"}}]}');
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
      held = res;
    });
  });
  return { server, state, finishStream };
}

function fakePodman(c: ReturnType<typeof fakeContainer>, o: { logs?: string; exit?: string } = {}) {
  const calls: string[] = [];
  const podman: Podman = {
    exists: (ref) => ref === "localhost/maitred:latest",
    size: () => 137_230_000,
    start: (_name, image) => void calls.push(`start ${image}`),
    healthcheck: () => 0,
    stop: async (_, timeoutS) => {
      calls.push(`stop -t ${timeoutS}`);
      c.state.draining = true;
      c.finishStream();
      return 0;
    },
    exitCode: () => o.exit ?? "0",
    logs: () => o.logs ?? "SIGTERM received, draining\nmaitred stopped\n",
    remove: (name) => void calls.push(`rm ${name.replace(/\d+$/, "N")}`),
  };
  return { podman, calls };
}

describe("the image's smoke check against a stand-in container", () => {
  const c = fakeContainer();
  let port = 0;
  before(async () => {
    await new Promise<void>((r) => c.server.listen(0, "127.0.0.1", r));
    port = (c.server.address() as AddressInfo).port;
  });
  after(() => c.server.close());

  it("passes every check when the container answers, drains and stops, then removes it", async () => {
    c.state.draining = false;
    const { podman, calls } = fakePodman(c);
    const lines: string[] = [];
    const clock = createVirtualClock();
    try {
      await smoke({ port: String(port) }, { podman, log: (l) => lines.push(l), clock });
    } finally {
      clock.stop();
    }
    const checks = lines.slice(0, -1);
    assert.equal(checks.length, 9, lines.join("\n"));
    assert.deepEqual(
      checks.filter((l) => !l.startsWith("ok   ")),
      [],
    );
    assert.match(checks[1], /^ok {3}README curl: 200, "hello there…"$/);
    assert.equal(checks[5], "ok   a new program while draining: 503 cell_draining");
    assert.equal(checks[6], "ok   the stream in flight finished: 2 chunks");
    assert.match(lines.at(-1)!, /^localhost\/maitred:latest: 137\.2 MB; smoke took \d+\.\d s$/);
    assert.deepEqual(calls, ["start localhost/maitred:latest", "stop -t 50", "rm maitred-smoke-N"]);
  });

  it("fails, naming each failed check, when the container exits badly without the drain's log lines", async () => {
    c.state.draining = false;
    const { podman, calls } = fakePodman(c, { logs: "SIGTERM received, draining\n", exit: "137" });
    const lines: string[] = [];
    const clock = createVirtualClock();
    await assert.rejects(
      smoke({ port: String(port) }, { podman, log: (l) => lines.push(l), clock }).finally(() =>
        clock.stop(),
      ),
      (e) => e instanceof ImageError && e.message === "smoke: 2 check(s) failed",
    );
    const failed = lines.filter((l) => l.startsWith("FAIL"));
    assert.equal(failed.length, 2, lines.join("\n"));
    assert.match(failed[0], /^FAIL podman stop took .* s; exit 137$/);
    assert.equal(failed[1], "FAIL log says it drained and stopped; missing: maitred stopped");
    assert.equal(calls.at(-1), "rm maitred-smoke-N", "the container is removed all the same");
  });

  it("refuses an image podman does not have, and a port that is no port, before starting anything", async () => {
    const { podman, calls } = fakePodman(c);
    await assert.rejects(
      smoke({ image: "nope:1" }, { podman }),
      (e) => e instanceof ImageError && e.message === "no image nope:1: npm run image -- build",
    );
    await assert.rejects(smoke({ port: "0" }, { podman }), /--port must be a port number, got 0/);
    assert.deepEqual(calls, []);
  });

  it("waitStatus polls until the status comes, and gives up after its time on the clock", async () => {
    c.state.draining = false;
    c.state.healthCalls = 0;
    c.state.healthyAfter = 3;
    const clock = createVirtualClock(1000);
    try {
      const url = `http://127.0.0.1:${port}/health`;
      assert.equal(await waitStatus(url, 200, 10_000, clock), 0.3);
      assert.equal(c.state.healthCalls, 4);
      c.state.healthCalls = 0;
      assert.equal(await waitStatus(url, 418, 1000, clock), null);
      assert.equal(c.state.healthCalls, 10, "one poll each 100 ms of the second");
    } finally {
      clock.stop();
      c.state.healthyAfter = 0;
    }
  });
});
