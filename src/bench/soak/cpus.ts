/**
 * `soak --router-cpus LIST`: the router (every cell) on those CPUs, the soak itself, the
 * simulated backends and HAProxy on the others, as an operator gives a router its own core. On
 * a small machine the driver and the backends otherwise take the router's CPU, and its
 * event-loop delay measures them, not it. Pinning is done with taskset (util-linux).
 */
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

/** What `--router-cpus` says when taskset cannot be run. */
export const TASKSET_MISSING =
  "--router-cpus needs taskset (util-linux): apt-get install util-linux";

/**
 * The CPUs of a taskset list (`0,2`) on a machine of `n` CPUs; throws unless each is one of
 * them and at least one is left for the rest.
 */
export function parseCpuList(list: string, n: number): number[] {
  const chosen = new Set(list.split(",").map((x) => Number(x.trim())));
  const bad = [...chosen].some((c) => !Number.isInteger(c) || c < 0 || c >= n);
  if (bad || chosen.size >= n)
    throw new Error(
      `must list CPUs in [0, ${n - 1}] separated by commas, leaving one for the rest`,
    );
  return [...chosen];
}

/** Two taskset lists: the router's, and every other CPU of the machine's `n`. */
export interface CpuSets {
  router: string;
  others: string;
}

/** The router's CPUs (checked with the flags) and the others, of a machine of `n` CPUs. */
export function cpuSets(list: string, n: number): CpuSets {
  const chosen = new Set(parseCpuList(list, n));
  const others = Array.from({ length: n }, (_, i) => i).filter((i) => !chosen.has(i));
  return { router: [...chosen].join(","), others: others.join(",") };
}

/** `--router-cpus` on this machine: null when not given (no pinning). */
export const routerCpuSets = (list: string | undefined): CpuSets | null =>
  list === undefined ? null : cpuSets(list, availableParallelism());

/** Whether `taskset` can be run. */
export function tasksetInstalled(): boolean {
  return spawnSync("taskset", ["-V"]).error === undefined;
}

/** Pin every thread of `pid` to `list` (a taskset list); a failure is said, not fatal. */
export function pin(pid: number, list: string | undefined): void {
  if (list === undefined) return;
  const r = spawnSync("taskset", ["-a", "-p", "-c", list, String(pid)]);
  if (r.status !== 0) console.error(`taskset could not pin ${pid} to ${list}: ${r.stderr}`);
}
