/**
 * The CPU samples `npm run bench:cells` takes at each phase's edges: each part's CPU seconds so
 * far from /proc (backends, cells, HAProxy, the driver itself) and the machine's jiffies, which
 * cells-analysis.ts `cpuShares` turns into shares.
 */
import { machineJiffies, processCpuSeconds } from "../process-stats.ts";
import { type CpuSample, sum } from "./cells-analysis.ts";

/** CPU seconds of a process; 0 once it is gone (a killed cell). */
export function cpuOf(pid: number): number {
  try {
    return processCpuSeconds(pid);
  } catch {
    return 0;
  }
}

/** This process's CPU seconds, user and system. */
function driverCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * A sample now: the backends' CPU read by pid, the cells' as the caller summed it (a killed
 * cell's time is kept by the caller), HAProxy's (none: 0).
 */
export function takeSample(
  backendPids: readonly number[],
  cells: number,
  hapPid: number | null,
): CpuSample {
  const m = machineJiffies();
  return {
    backends: sum(backendPids.map(cpuOf)),
    cells,
    haproxy: hapPid === null ? 0 : cpuOf(hapPid),
    driver: driverCpu(),
    busy: m.busy,
    total: m.total,
  };
}
