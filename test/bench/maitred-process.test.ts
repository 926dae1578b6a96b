import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";

const MODULE = new URL("../../src/bench/maitred-process.ts", import.meta.url).href;

/** Gone, or a zombie nobody has reaped yet: either way no longer running. */
function running(pid: number): boolean {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return false;
  try {
    return !/^State:\s+Z/m.test(readFileSync(status, "utf8"));
  } catch {
    return false; // reaped between the two reads
  }
}

/**
 * A driver process that starts a long-lived child through `endsWithUs`, says the child's pid,
 * then ends `how`; resolves with the child's pid once the driver has exited.
 */
function driverThatEnds(how: "exit" | "throw"): Promise<number> {
  const code = `
    import { spawn } from "node:child_process";
    import { endsWithUs } from ${JSON.stringify(MODULE)};
    const child = endsWithUs(spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }));
    child.once("spawn", () => {
      process.stdout.write(child.pid + "\\n");
      ${how === "exit" ? "process.exit(0);" : 'throw new Error("driver failed");'}
    });`;
  const driver = spawn(process.execPath, ["--input-type=module", "-e", code], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  driver.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  return new Promise((resolve, reject) => {
    driver.once("error", reject);
    driver.once("exit", () => {
      const pid = Number.parseInt(out, 10);
      if (Number.isInteger(pid)) resolve(pid);
      else reject(new Error(`the driver said no pid: ${JSON.stringify(out)}`));
    });
  });
}

describe("endsWithUs", () => {
  for (const how of ["exit", "throw"] as const) {
    it(`kills the child when the driver ends by ${how === "exit" ? "exiting" : "an uncaught error"}`, async () => {
      const pid = await driverThatEnds(how);
      assert.equal(running(pid), false, `child ${pid} outlived its driver`);
    });
  }
});
