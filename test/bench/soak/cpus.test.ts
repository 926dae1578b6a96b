import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cpuSets, parseCpuList } from "../../../src/bench/soak/cpus.ts";

describe("the router's CPUs", () => {
  it("reads a taskset list of the machine's CPUs", () => {
    assert.deepEqual(parseCpuList("1", 2), [1]);
    assert.deepEqual(parseCpuList(" 0, 2 ,0", 4), [0, 2], "spaces and repeats are taken once");
  });

  it("refuses CPUs the machine lacks, and a list that leaves none for the rest", () => {
    assert.throws(() => parseCpuList("2", 2), /must list CPUs in \[0, 1\]/);
    assert.throws(() => parseCpuList("-1", 4), /must list CPUs/);
    assert.throws(() => parseCpuList("1.5", 4), /must list CPUs/);
    assert.throws(() => parseCpuList("a", 4), /must list CPUs/);
    assert.throws(() => parseCpuList("0,1", 2), /leaving one for the rest/);
  });

  it("gives every other CPU to the soak, the backends and HAProxy", () => {
    assert.deepEqual(cpuSets("1", 2), { router: "1", others: "0" });
    assert.deepEqual(cpuSets("3,1", 6), { router: "3,1", others: "0,2,4,5" });
  });
});
