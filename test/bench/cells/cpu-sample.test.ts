import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cpuOf, takeSample } from "../../../src/bench/cells/cpu-sample.ts";

describe("CPU samples", { skip: process.platform !== "linux" }, () => {
  it("a process that is gone used no more CPU", () => {
    assert.equal(cpuOf(2 ** 22 + 1), 0, "beyond the largest pid Linux gives");
  });

  it("reads each part, counts the cells as given and HAProxy as 0 when there is none", () => {
    const s = takeSample([process.pid, process.pid], 7, null);
    assert.equal(s.cells, 7);
    assert.equal(s.haproxy, 0);
    assert.ok(s.backends >= 2 * cpuOf(process.pid) - 0.1, "both pids' time summed");
    assert.ok(s.driver > 0);
    assert.ok(s.total > s.busy && s.busy > 0);
    assert.ok(takeSample([], 0, process.pid).haproxy > 0);
  });
});
