import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { progressLog } from "../../../src/bench/cells/progress-log.ts";

describe("progressLog", () => {
  it("writes each mark with its time, and appends it to HAProxy's log file when given", () => {
    const dir = mkdtempSync(join(tmpdir(), "cells-log-"));
    try {
      const file = join(dir, "haproxy.log");
      const lines: string[] = [];
      const log = progressLog(
        file,
        (l) => lines.push(l),
        () => 1_700_000_000_000,
      );
      log("stable phase");
      log("cell-b killed");
      assert.deepEqual(lines, [
        "[bench-cells 2023-11-14T22:13:20.000Z] stable phase",
        "[bench-cells 2023-11-14T22:13:20.000Z] cell-b killed",
      ]);
      assert.equal(
        readFileSync(file, "utf8"),
        "# 1700000000000 stable phase\n# 1700000000000 cell-b killed\n",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without a file, only writes", () => {
    const lines: string[] = [];
    progressLog(
      undefined,
      (l) => lines.push(l),
      () => 0,
    )("x");
    assert.deepEqual(lines, ["[bench-cells 1970-01-01T00:00:00.000Z] x"]);
  });
});
