import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  parseRequestLine,
  parseStateLine,
  withRequestLog,
} from "../../../src/bench/cells/haproxy-log.ts";

describe("HAProxy's request log", () => {
  it("a request line gives its start after handshake and idle time, in the reader's clock", () => {
    const line =
      "REQ 1700000000.250 cells_by_program cell-b cells-p7 200 1/4/0/0/1/30/35 +1 ---- 512 POST /v1/chat/completions";
    const r = parseRequestLine(line, 1_000);
    assert.ok(r !== null);
    const start = 1_700_000_000_250 - 1_000 + 1 + 4;
    assert.equal(r.startMs, start);
    assert.equal(r.sentMs, start + 0 + 0 + 1, "start + TR + Tw + Tc");
    assert.equal(r.endMs, start + 35);
    assert.equal(r.server, "cell-b");
    assert.equal(r.program, "cells-p7");
    assert.equal(r.status, 200);
    assert.equal(r.retries, 1);
    assert.equal(r.term, "----");
    assert.equal(r.method, "POST");
    assert.equal(r.path, "/v1/chat/completions");
  });

  it("a step that never happened (-1) adds nothing; no program id is null", () => {
    const r = parseRequestLine(
      "REQ 1700000000.000 cells_by_program <NOSRV> - 503 0/0/0/-1/-1/-1/2 0 SC-- 0 GET /health",
      0,
    );
    assert.ok(r !== null);
    assert.equal(r.sentMs, r.startMs);
    assert.equal(r.program, null);
    assert.equal(r.tc, -1);
  });

  it("other lines are not requests; the ring's state changes are read apart", () => {
    assert.equal(parseRequestLine("Server cells_by_program/cell-a is DOWN", 0), null);
    assert.deepEqual(parseStateLine("Server cells_by_program/cell-a is DOWN, reason: x"), {
      server: "cell-a",
      state: "DOWN",
    });
    assert.equal(parseStateLine("Server other/cell-a is UP"), null);
  });

  it("the log lines go right after the client frontend's bind, or the config is refused", () => {
    const config = "global\nfrontend maitred\n    bind 127.0.0.1:1\n    mode http\n";
    const out = withRequestLog(config);
    assert.match(out, /bind 127\.0\.0\.1:1\n {4}# bench-cells[^\n]*\n {4}no log\n/);
    assert.match(out, /log-format "REQ /);
    assert.throws(() => withRequestLog("global\n"), /no `frontend maitred`/);
  });
});
