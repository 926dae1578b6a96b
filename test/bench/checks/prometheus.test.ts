import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  prometheusConfig,
  queryUrl,
  queryValues,
  waitReady,
} from "../../../src/bench/checks/prometheus.ts";
import { createVirtualClock } from "../../../src/runtime/clock.ts";

describe("Prometheus's config and queries", () => {
  it("scrapes the one target every 2 s", () => {
    const yml = prometheusConfig("127.0.0.1:8300");
    assert.match(yml, /^ {2}scrape_interval: 2s$/m);
    assert.match(yml, /targets: \["127\.0\.0\.1:8300"\]/);
  });

  it("gives Grafana's $__rate_interval 30 s and encodes the query", () => {
    const url = queryUrl(
      "http://p:9",
      'rate(x{a="b"}[$__rate_interval]) + rate(y[$__rate_interval])',
    );
    const expr = new URL(url).searchParams.get("query");
    assert.equal(expr, 'rate(x{a="b"}[30s]) + rate(y[30s])');
    assert.ok(url.startsWith("http://p:9/api/v1/query?query="));
  });

  it("reads one value per series, NaN kept, and throws on an error answer naming the query", () => {
    const doc = {
      status: "success",
      data: {
        result: [{ value: [1, "2.5"] }, { value: [1, "NaN"] }] as { value: [number, string] }[],
      },
    };
    const values = queryValues("e", doc);
    assert.equal(values[0], 2.5);
    assert.ok(Number.isNaN(values[1]));
    assert.deepEqual(queryValues("e", { status: "success" }), []);
    assert.throws(
      () => queryValues("bad(", { status: "error", error: "parse error" }),
      /^Error: bad\(: parse error$/,
    );
  });
});

describe("waiting for Prometheus", () => {
  let readyAfter = 0;
  let calls = 0;
  const server = createServer((_, res) => {
    calls++;
    res.writeHead(calls > readyAfter ? 200 : 503).end();
  });
  let url = "";
  before(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  async function wait(startError: () => Error | null, polls?: number) {
    const clock = createVirtualClock();
    try {
      await waitReady(url, startError, clock, polls);
    } finally {
      clock.stop();
    }
  }

  it("polls /-/ready until it answers OK", async () => {
    calls = 0;
    readyAfter = 3;
    await wait(() => null);
    assert.equal(calls, 4);
  });

  it("says to install it when it could not start, and gives up after its polls", async () => {
    calls = 0;
    readyAfter = Number.POSITIVE_INFINITY;
    await assert.rejects(
      wait(() => new Error("spawn prometheus ENOENT")),
      /cannot start prometheus \(apt-get install prometheus\): Error: spawn prometheus ENOENT/,
    );
    assert.equal(calls, 1);
    calls = 0;
    await assert.rejects(
      wait(() => null, 3),
      /prometheus did not become ready/,
    );
    assert.equal(calls, 5, "one poll past the count, as the check has always made");
  });
});
