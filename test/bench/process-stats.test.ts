import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  processCpuSeconds,
  processRssBytes,
  statCpuTicks,
  statJiffies,
  statusRssBytes,
} from "../../src/bench/process-stats.ts";

describe("reading /proc", () => {
  it("takes utime + stime after the command name, even one with spaces and parentheses", () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
    const stat = "4242 (node (a b)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 11";
    assert.equal(statCpuTicks(stat), 300, "got utime + stime of the wrong fields");
  });

  it("reads VmRSS in bytes, null without the line", () => {
    assert.equal(statusRssBytes("Name:\tnode\nVmRSS:\t  2048 kB\nThreads:\t7\n"), 2048 * 1024);
    assert.equal(statusRssBytes("Name:\tnode\n"), null);
  });

  it("counts idle and iowait as not busy on the machine's cpu line", () => {
    const j = statJiffies("cpu  10 1 5 80 4 0 0 0 0 0\ncpu0 5 0 2 40 2 0 0 0 0 0\n");
    assert.deepEqual(j, { busy: 16, total: 100 });
  });

  it("this process's own figures are there and positive", {
    skip: process.platform !== "linux",
  }, () => {
    assert.ok(processCpuSeconds(process.pid) >= 0);
    assert.ok(processRssBytes(process.pid) > 0);
  });
});
