import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveSimulateFlags } from "../../src/simulate/simulate-options.ts";
import { formatSimulateTable } from "../../src/simulate/simulate-report.ts";
import { simulateSweep } from "../../src/simulate/simulate-sweep.ts";
import { loadWorkload } from "../../src/workload/load-workload.ts";

test("simulate --shadow: a tr shadow beside each default run, in the table and the report", async () => {
  const o = resolveSimulateFlags({
    router: "default,tr",
    workload: "deepseek",
    concurrency: "12",
    numBackends: "1",
    numGpuBlocks: "2000",
    warmup: "0s",
    duration: "3m",
    seed: "7",
    shadow: true,
  });
  assert.equal(o.shadow, true);
  const [plain, tr] = simulateSweep(o, await loadWorkload(o.workload));
  assert.equal(plain.router, "default");
  assert.equal(tr.shadow, undefined, "tr itself has no shadow");
  const s = plain.shadow;
  assert.ok(s !== undefined);
  assert.ok(s.decisions.seat > 0, "it saw the plain router's requests");
  assert.ok(s.held.held > 0, "on an engine this small tr would have held some");
  assert.equal(s.errors, 0);
  assert.equal(plain.paused_ms.total, 0, "the plain router held nothing itself");
  assert.match(formatSimulateTable([plain, tr]), /tr shadow beside default \(C=12\)/);
  assert.equal(resolveSimulateFlags({}).shadow, false);
});
