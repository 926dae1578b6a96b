/**
 * What the kernel says about another process (and the machine), read from /proc: the CPU time
 * and the resident memory of a router, a relay or HAProxy that a script started. CPU read from
 * the process is what its work cost whatever else the machine is doing; requests per second
 * are not, on a machine shared with other work. Linux only, as the benchmarks are.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let clockTicks: number | null = null;

/**
 * Kernel clock ticks per second, the unit of utime and stime in /proc/<pid>/stat: asked of
 * `getconf` on the first read, not on import (`maitred bench` imports this file through
 * maitred-process.ts, and nothing happens at import time).
 */
function clockTicksPerSecond(): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * utime + stime, in clock ticks, of a /proc/<pid>/stat line: fields 14 and 15, counted after
 * the command name, which is in parentheses and may hold spaces (so the line is split after
 * its last closing parenthesis, not on every space).
 */
export function statCpuTicks(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state), so utime (14) and stime (15) are rest[11] and rest[12].
  return Number(rest[11]) + Number(rest[12]);
}

/**
 * User + system CPU seconds of process `pid` so far, all its threads (JIT, GC, libuv's pool)
 * included. Its resolution is one clock tick (10 ms), so a phase should give the process a
 * second or more of work. Throws once the process is gone.
 */
export function processCpuSeconds(pid: number): number {
  return statCpuTicks(readFileSync(`/proc/${pid}/stat`, "utf8")) / clockTicksPerSecond();
}

/** VmRSS of a /proc/<pid>/status text, in bytes; null when the line is missing. */
export function statusRssBytes(status: string): number | null {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kb === undefined ? null : Number(kb) * 1024;
}

/** Resident memory of process `pid` (VmRSS), in bytes. Throws once the process is gone. */
export function processRssBytes(pid: number): number {
  const bytes = statusRssBytes(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (bytes === null) throw new Error(`no VmRSS for ${pid}`);
  return bytes;
}

/**
 * Busy and total jiffies of the whole machine from the first (`cpu`) line of /proc/stat: busy
 * is all but idle and iowait, so busy ÷ total between two reads is the machine's CPU use.
 */
export function statJiffies(procStat: string): { busy: number; total: number } {
  const n = procStat.split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const total = n.reduce((s, v) => s + v, 0);
  return { busy: total - n[3] - n[4], total };
}

/** The machine's busy and total jiffies now (/proc/stat). */
export const machineJiffies = () => statJiffies(readFileSync("/proc/stat", "utf8"));
