import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ImageError } from "../../../src/bench/checks/image-error.ts";
import {
  CONTAINERS_CONF,
  megabytes,
  needPodman,
  type PodmanHost,
  runTool,
} from "../../../src/bench/checks/podman.ts";

function host(installed: string[], o: Partial<PodmanHost> = {}): PodmanHost & { said: string[] } {
  return {
    has: (cmd) => installed.includes(cmd),
    systemd: false,
    env: {},
    confDir: "/nonexistent",
    said: [],
    ...o,
  };
}

describe("needPodman", () => {
  it("without systemd, writes a containers.conf for runc and cgroupfs and points CONTAINERS_CONF at it", () => {
    const dir = mkdtempSync(join(tmpdir(), "podman-test-"));
    try {
      const h = host(["podman", "runc"], { confDir: join(dir, "conf") });
      const said: string[] = [];
      needPodman(h, (l) => said.push(l));
      assert.equal(h.env.CONTAINERS_CONF, join(dir, "conf", "containers.conf"));
      assert.equal(readFileSync(h.env.CONTAINERS_CONF, "utf8"), CONTAINERS_CONF);
      assert.match(CONTAINERS_CONF, /runtime = "runc"/);
      assert.deepEqual(said, [
        `no systemd here: CONTAINERS_CONF=${h.env.CONTAINERS_CONF} (runc, cgroupfs)`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves a host with systemd, or with CONTAINERS_CONF already set, as it is", () => {
    for (const h of [
      host(["podman"], { systemd: true }),
      host(["podman"], { env: { CONTAINERS_CONF: "/etc/mine.conf" } }),
    ]) {
      const before = { ...h.env };
      needPodman(h, () => assert.fail("printed something"));
      assert.deepEqual(h.env, before);
    }
  });

  it("says what to install when podman, or runc without systemd, is missing", () => {
    assert.throws(
      () => needPodman(host([])),
      (e) => e instanceof ImageError && /^podman is not installed: apt-get install/.test(e.message),
    );
    assert.throws(
      () => needPodman(host(["podman"])),
      (e) => e instanceof ImageError && /^runc is not installed/.test(e.message),
    );
  });
});

describe("runTool", () => {
  it("gives the trimmed stdout of a tool that succeeds", () => {
    assert.equal(runTool("sh", ["-c", "echo '  hi  '"]), "hi");
  });

  it("fails with the exit code and the last three lines of stderr in one line", () => {
    assert.throws(
      () => runTool("sh", ["-c", "printf 'a\\nb\\nc\\nd\\n' >&2; exit 3"]),
      (e) => e instanceof ImageError && e.message === "sh -c failed (exit 3): b | c | d",
    );
  });

  it("fails with the spawn error when the tool is not installed", () => {
    assert.throws(
      () => runTool("maitred-no-such-tool", ["x"]),
      (e) => e instanceof ImageError && /^maitred-no-such-tool: .*ENOENT/.test(e.message),
    );
  });
});

it("megabytes prints decimal MB to one place", () => {
  assert.equal(megabytes(137_230_000), "137.2 MB");
  assert.equal(megabytes(0), "0.0 MB");
});
