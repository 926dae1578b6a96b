import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  marginalLines,
  type TokenRow,
  tokenCases,
  tokensTable,
} from "../../../src/bench/overhead/proxy-tokens.ts";

const row = (o: Partial<TokenRow>): TokenRow => ({
  upstream: "vllm",
  api: "chat",
  stream: true,
  tokens: 64,
  connections: 16,
  direct_rps: 1000,
  router_rps: 500,
  router_cpu_s: 2,
  router_seconds: 4,
  requests: 100,
  events: 100 * 67,
  writes: 100 * 67,
  cpu_us_per_request: 1000,
  cpu_us_per_event: 1000 / 67,
  relay_cpu_us_per_request: 300,
  relay_cpu_us_per_event: 300 / 66,
  relay_events_per_request: 66,
  http_relay_cpu_us_per_request: 400,
  http_relay_cpu_us_per_event: 400 / 66,
  http_relay_events_per_request: 66,
  ...o,
});

describe("the tokens phase", () => {
  it("runs each case once per API, the APIs of a case one after the other", () => {
    const cases = tokenCases(16, ["chat", "messages"]);
    assert.equal(cases.length, 7 * 2);
    assert.deepEqual(
      cases.slice(0, 2).map((c) => [c.api, c.stream, c.tokens, c.connections]),
      [
        ["chat", false, 4, 16],
        ["messages", false, 4, 16],
      ],
    );
    assert.ok(cases.some((c) => !c.stream && c.tokens === 4 && c.connections === 64));
  });

  it("a table row per case, the router's CPU in bold, a missing per-event cost as –", () => {
    const table = tokensTable([row({ stream: false, cpu_us_per_event: null })]);
    const lines = table.split("\n");
    assert.equal(lines.length, 3);
    assert.match(lines[1], /^\| --- \| --- \| --- \| ---: /, "three text columns");
    assert.match(
      lines[2],
      /^\| `vllm` \| chat \| plain \| 64 \| 16 \| 1,000 \| 500 \| 0\.50× \| \*\*1,000\.0\*\* \| – \|/,
    );
    assert.match(lines[2], /\| 50 % \|$/, "router CPU busy: 2 s of 4");
  });

  it("an additional event costs the difference in CPU per request over the events between", () => {
    const rows = [
      row({ tokens: 64, cpu_us_per_request: 1000, events: 100 * 67 }),
      row({
        tokens: 512,
        cpu_us_per_request: 1000 + 448 * 2,
        events: 100 * 515,
        relay_cpu_us_per_request: 300 + 448,
        relay_events_per_request: 514,
        http_relay_cpu_us_per_request: 400 + 448 * 1.5,
        http_relay_events_per_request: 514,
      }),
    ];
    assert.equal(
      marginalLines(rows),
      "Router CPU per additional event (512 tokens less 64, per event between):\n" +
        "- `vllm`, chat: streamed **2.00 µs**, the bare TCP relay streamed 1.00 µs, the bare HTTP relay 1.50 µs",
    );
    assert.equal(marginalLines([rows[0]]), "", "no pair of lengths: nothing to say");
  });
});
