/**
 * What cells behind HAProxy cost and keep: three cells (each `maitred serve --router tr` with
 * two simulated backends, every one its own process) behind the HAProxy configuration
 * `maitred cells haproxy-config` writes, one cell killed and restarted part-way; program
 * affinity, requests lost, failover time, steps/min and CPU per phase, the ratio against lone
 * routers and the latency HAProxy adds. The run and its report: src/bench/cells/bench-cells.ts;
 * the flags: `--help` (scripts/README.md says more). Needs `haproxy` (2.6+).
 */
import { runBenchCells } from "../src/bench/cells/bench-cells.ts";
import { createClosers } from "../src/bench/cells/closers.ts";
import { progressLog } from "../src/bench/cells/progress-log.ts";
import { BENCH_CELLS_SPEC, cellsSettings } from "../src/bench/cells/spec.ts";
import { haproxyInstalled } from "../src/bench/haproxy-process.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";

const settings = cellsSettings(scriptArgs(BENCH_CELLS_SPEC));

// HAProxy first: nothing is started without it.
if (!haproxyInstalled()) {
  console.error("haproxy not found: apt-get install haproxy");
  process.exit(2);
}

const closers = createClosers();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    console.error(`\n${sig}: stopping HAProxy, cells and backends`);
    void closers.closeAll().then(() => process.exit(130));
  });
}

try {
  const met = await runBenchCells(settings, {
    closers,
    log: progressLog(settings.haproxyLog),
    print: (line) => console.log(line),
  });
  process.exitCode = met ? 0 : 1;
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await closers.closeAll();
}
