import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { test } from "node:test";
import { resolveRouterConfig } from "../../src/config/load-config.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import { startRouter } from "../../src/service/service.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";

test("a port already taken fails startup and leaves no poller running", async () => {
  const backend = await startFakeBackend();
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  const port = (taken.address() as AddressInfo).port;
  const clock = createManualClock(0);
  try {
    const config = resolveRouterConfig({
      flags: { host: "127.0.0.1", port: String(port), backends: backend.url },
    });
    await assert.rejects(startRouter(config, { clock, logger: silentLogger }), /EADDRINUSE/);
    const polls = () => backend.received.filter((r) => r.path === "/metrics").length;
    const before = polls();
    assert.equal(before, 1, "the first tick polled before the port was tried");
    clock.advance(60_000);
    await new Promise((r) => setImmediate(r));
    assert.equal(polls(), before, "no tick after the failed start");
    assert.equal(clock.pendingTimers(), 0, "no timer left behind");
  } finally {
    taken.close();
    await backend.close();
  }
});

test("a stop asked for while the first tick waits on a frozen backend ends the start-up at once, leaving nothing behind", async () => {
  const backend = await startFakeBackend();
  backend.freezeMetrics(true);
  const clock = createManualClock(0);
  const stop = new AbortController();
  try {
    const config = resolveRouterConfig({
      flags: { host: "127.0.0.1", port: "0", backends: backend.url, "poll-timeout": "10" },
    });
    const starting = startRouter(config, { clock, logger: silentLogger, signal: stop.signal });
    // The first poll is out and unanswered; the start waits for it (up to the poll timeout).
    while (!backend.received.some((r) => r.path === "/metrics"))
      await new Promise((r) => setImmediate(r));
    stop.abort(new Error("SIGTERM during start-up"));
    await assert.rejects(starting, /SIGTERM during start-up/);
    assert.equal(clock.now(), 0, "no time had to pass");
    assert.equal(clock.pendingTimers(), 0, "no timer left behind");
  } finally {
    await backend.close();
  }
});
