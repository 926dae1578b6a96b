/**
 * The names `npm run image` builds and runs: the repository it builds from, the bases it builds
 * on, the image it tags, and where it keeps podman's configuration on a host without systemd.
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The repository's root: the image's build context. */
export const ROOT = join(import.meta.dirname, "../../..");
export const CONTAINERFILE = join(ROOT, "config/deploy/Containerfile");
/** The package's version, the image's versioned tag. */
export const VERSION = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;
export const PUBLIC_BASE = "docker.io/library/node:24-bookworm-slim";
export const LOCAL_BASE = "localhost/maitred-base:bookworm-node24";
export const IMAGE = "localhost/maitred";
/** Where the containers.conf for a host without systemd is written. */
export const CONF_DIR = join(tmpdir(), "maitred-image");
