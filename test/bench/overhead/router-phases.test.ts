import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type FastUpstream, startFastUpstream } from "../../../src/bench/overhead/fast-upstream.ts";
import { type LoadCommand, runLoad, SSE_CHUNKS } from "../../../src/bench/overhead/proxy-load.ts";
import type { LoadRequest } from "../../../src/bench/overhead/proxy-workers.ts";
import { runRouterPhases } from "../../../src/bench/overhead/router-phases.ts";

describe("bench:proxy's phases with the router in this process", () => {
  let upstream: FastUpstream;
  before(async () => {
    upstream = await startFastUpstream(SSE_CHUNKS);
  });
  after(() => upstream.close());

  it("each phase directly and through a router of its own, the router's thread CPU read", async () => {
    const sent: LoadRequest[] = [];
    // The load in this thread (bench:proxy runs it in a worker), sized to end at once.
    const load = (cmd: LoadRequest) => {
      sent.push(cmd);
      return runLoad({ requests: 2, seconds: 0.01, connections: 1, ...cmd } as LoadCommand);
    };
    const before = upstream.stats().requests;
    const results = await runRouterPhases({
      upstreamUrl: upstream.url,
      router: "tr",
      upstreamStream: "always",
      phases: ["latency"],
      load,
      warmupSeconds: 0.01,
    });
    assert.deepEqual(
      sent.map((c) => [c.kind, c.url === upstream.url ? "direct" : "router"]),
      [
        ["throughput", "direct"],
        ["throughput", "router"],
        ["latency", "direct"],
        ["latency", "router"],
      ],
      "both paths warmed, then the phase on each",
    );
    assert.equal(results.direct.latency.n, 2);
    assert.equal(results.router.latency.n, 2);
    assert.ok(results.router.latency.router_cpu_s >= 0);
    assert.ok(upstream.stats().requests - before >= 4, "the router reached the upstream");
  });
});
