import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cellUp } from "../../../src/bench/haproxy-process.ts";
import { procStats, routerName } from "../../../src/bench/soak/fleet.ts";

describe("the soak's fleet", () => {
  it("names the lone router, and cells by letter", () => {
    assert.equal(routerName(0, 0), "router");
    assert.deepEqual(
      [0, 1, 25].map((i) => routerName(26, i)),
      ["cell-a", "cell-b", "cell-z"],
    );
  });

  it("reads a live process's memory and CPU, and nothing of one that is gone", () => {
    const own = procStats(process.pid);
    assert.ok(own.rssMb !== null && own.rssMb > 1, `RSS ${own.rssMb} MB`);
    assert.ok(own.cpuS !== null && own.cpuS > 0);
    // Above the kernel's largest pid (2^22): never a process.
    assert.deepEqual(procStats(2 ** 22 + 1), { rssMb: null, cpuS: null });
  });

  it("waits on HAProxy's view of a cell: UP only with its last check passed", () => {
    const up = 'haproxy_server_status{proxy="cells_by_program",server="cell-a",state="UP"} 1';
    const ok =
      'haproxy_server_check_status{proxy="cells_by_program",server="cell-a",state="L7OK"} 1';
    const failed =
      'haproxy_server_check_status{proxy="cells_by_program",server="cell-a",state="L4CON"} 1';
    assert.ok(cellUp(`${up}\n${ok}\n`, "cell-a"));
    assert.ok(!cellUp(`${up}\n${failed}\n`, "cell-a"), "UP but its check failing");
    assert.ok(!cellUp(`${up}\n${ok}\n`, "cell-b"));
    assert.ok(
      !cellUp(`${up.replace("cells_by_program", "cells_any")}\n${ok}`, "cell-a"),
      "other proxy",
    );
  });
});
