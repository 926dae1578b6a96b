/**
 * `npm run bench:cells`'s progress marks: each on stderr with its time, and, with
 * `--haproxy-log`, in HAProxy's log file too, stamped on HAProxy's clock (the system clock,
 * ms since the epoch), so the two can be read side by side.
 */
import { appendFileSync } from "node:fs";

export type ProgressLog = (msg: string) => void;

export function progressLog(
  logFile: string | undefined,
  writeErr: (line: string) => void = (line) => console.error(line),
  now: () => number = Date.now,
): ProgressLog {
  return (msg) => {
    const at = now();
    writeErr(`[bench-cells ${new Date(at).toISOString()}] ${msg}`);
    if (logFile !== undefined) appendFileSync(logFile, `# ${at} ${msg}\n`);
  };
}
