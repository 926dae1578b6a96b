/**
 * The tools `npm run image` drives (podman, npm, tar, debootstrap), run synchronously with one
 * line of their stderr in the error, and podman made usable on a host without systemd. The
 * smoke check reaches podman through the `Podman` interface, so its checks can be tried
 * against a stand-in.
 */
import { type SpawnSyncOptions, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ImageError } from "./image-error.ts";
import { CONF_DIR } from "./image-refs.ts";

/** What podman needs on a machine without systemd and with a low open-files hard limit. */
export const CONTAINERS_CONF = `[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n`;
export const INSTALL_HINT =
  'apt-get install -y podman runc debootstrap (not crun: it cannot run on cgroup v1 hybrid hosts); without systemd this script then sets CONTAINERS_CONF to a containers.conf with runtime = "runc", cgroup_manager = "cgroupfs", default_ulimits = []';

/** `cmd args`'s stdout, trimmed; an `ImageError` with the end of its stderr when it fails. */
export function runTool(cmd: string, args: string[], o: SpawnSyncOptions = {}): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...o });
  if (r.error) throw new ImageError(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    const err = String(r.stderr ?? "")
      .trim()
      .split("\n")
      .slice(-3)
      .join(" | ");
    throw new ImageError(`${cmd} ${args[0]} failed (exit ${r.status})${err ? `: ${err}` : ""}`);
  }
  return String(r.stdout ?? "").trim();
}

/** Whether `cmd` is installed (it starts at all). */
export const has = (cmd: string, arg = "--version") =>
  !spawnSync(cmd, [arg], { stdio: "ignore" }).error;

/** What needPodman looks at and changes: the tools installed, systemd, the environment. */
export interface PodmanHost {
  has(cmd: string): boolean;
  systemd: boolean;
  /** The environment podman's calls inherit: CONTAINERS_CONF is set here. */
  env: NodeJS.ProcessEnv;
  confDir: string;
}

export const thisHost = (): PodmanHost => ({
  has,
  systemd: existsSync("/run/systemd/system"),
  env: process.env,
  confDir: CONF_DIR,
});

/** podman, usable here: installed, and configured for a host without systemd. */
export function needPodman(host = thisHost(), log = console.log): void {
  if (!host.has("podman")) throw new ImageError(`podman is not installed: ${INSTALL_HINT}`);
  if (host.env.CONTAINERS_CONF || host.systemd) return;
  if (!host.has("runc")) throw new ImageError(`runc is not installed: ${INSTALL_HINT}`);
  mkdirSync(host.confDir, { recursive: true });
  host.env.CONTAINERS_CONF = join(host.confDir, "containers.conf");
  writeFileSync(host.env.CONTAINERS_CONF, CONTAINERS_CONF);
  log(`no systemd here: CONTAINERS_CONF=${host.env.CONTAINERS_CONF} (runc, cgroupfs)`);
}

/** Bytes as the image commands print a size: `137.2 MB`. */
export const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** The podman calls of the smoke check, on a container by its name. */
export interface Podman {
  exists(ref: string): boolean;
  /** Bytes of the image `ref`. */
  size(ref: string): number;
  /** Starts `image` detached as `name`, its port 8300 published on loopback `port`. */
  start(name: string, image: string, port: number): void;
  /** `podman healthcheck run`'s exit code. */
  healthcheck(name: string): number | null;
  /** `podman stop` with `timeoutS` before SIGKILL; resolves with its exit code. */
  stop(name: string, timeoutS: number): Promise<number | null>;
  /** The container's exit code, as podman inspect prints it. */
  exitCode(name: string): string;
  /**
   * Its log, or its last `tail` lines: maitred writes to stderr, which podman gives back on its
   * own stderr, so both are read.
   */
  logs(name: string, tail?: number): string;
  remove(name: string): void;
}

export const imageExists = (ref: string) =>
  spawnSync("podman", ["image", "exists", ref], { stdio: "ignore" }).status === 0;

export const imageSize = (ref: string) =>
  Number(runTool("podman", ["image", "inspect", "--format", "{{.Size}}", ref]));

/** The `Podman` of this host. */
export const podmanCli: Podman = {
  exists: imageExists,
  size: imageSize,
  start(name, image, port) {
    runTool("podman", ["run", "-d", "--name", name, "-p", `127.0.0.1:${port}:8300`, image]);
  },
  healthcheck: (name) => spawnSync("podman", ["healthcheck", "run", name]).status,
  stop: (name, timeoutS) =>
    new Promise((resolve) => {
      spawn("podman", ["stop", "-t", String(timeoutS), name], { stdio: "ignore" }).on(
        "close",
        resolve,
      );
    }),
  exitCode: (name) => runTool("podman", ["inspect", "--format", "{{.State.ExitCode}}", name]),
  logs(name, tail) {
    const args = tail === undefined ? ["logs", name] : ["logs", "--tail", String(tail), name];
    const out = spawnSync("podman", args, { encoding: "utf8" });
    return `${out.stdout}${out.stderr}`;
  },
  remove(name) {
    spawnSync("podman", ["rm", "-f", name], { stdio: "ignore" });
  },
};
