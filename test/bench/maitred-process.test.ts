import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { endsWithUs } from "../../src/bench/maitred-process.ts";

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
 * A driver process that starts a child through `endsWithUs` (with a cleanup that removes
 * `dir`), says the child's pid, then ends `how`. The child shares the driver's stdout, so the
 * pipe closes only once both have exited: the promise resolves then, with the child's pid.
 * A child that outlived its driver would keep the pipe open until its own minute is up, and
 * the test fails on its timeout.
 */
function driverThatEnds(how: "exit" | "throw", dir: string): Promise<number> {
  const code = `
    import { spawn } from "node:child_process";
    import { rmSync } from "node:fs";
    import { endsWithUs } from ${JSON.stringify(MODULE)};
    const child = endsWithUs(
      spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: ["ignore", "inherit", "ignore"] }),
      () => rmSync(${JSON.stringify(dir)}, { recursive: true, force: true }),
    );
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
    driver.stdout.once("close", () => {
      const pid = Number.parseInt(out, 10);
      if (Number.isInteger(pid)) resolve(pid);
      else reject(new Error(`the driver said no pid: ${JSON.stringify(out)}`));
    });
  });
}

describe("endsWithUs", () => {
  for (const how of ["exit", "throw"] as const) {
    it(`stops the child and runs its cleanup when the driver ends by ${how === "exit" ? "exiting" : "an uncaught error"}`, {
      timeout: 30_000,
    }, async () => {
      const dir = mkdtempSync(join(tmpdir(), "ends-with-us-"));
      const pid = await driverThatEnds(how, dir);
      assert.equal(running(pid), false, `child ${pid} outlived its driver`);
      assert.equal(existsSync(dir), false, "the cleanup did not run");
    });
  }

  it("forgets a child that exits first, leaving no exit hook behind", async () => {
    const before = process.listenerCount("exit");
    const children = [0, 1].map(() =>
      endsWithUs(spawn(process.execPath, ["-e", ""], { stdio: "ignore" })),
    );
    assert.equal(process.listenerCount("exit"), before + 1, "one hook serves every child");
    await Promise.all(children.map((c) => new Promise((r) => c.once("exit", r))));
    assert.equal(process.listenerCount("exit"), before);
  });

  it("forgets a child that fails to start", async () => {
    const before = process.listenerCount("exit");
    const child = endsWithUs(spawn("/nonexistent/maitred-test-binary", [], { stdio: "ignore" }));
    await new Promise((r) => child.once("error", r));
    assert.equal(process.listenerCount("exit"), before);
  });
});
