/**
 * `npm run image -- build`: maitred's image from config/deploy/Containerfile, tagged with the
 * package's version and `latest`, on the local base when there is one, else on the public one.
 */
import { spawnSync } from "node:child_process";
import type { BuildOptions } from "./image-args.ts";
import { base, registryReachable } from "./image-base.ts";
import { ImageError } from "./image-error.ts";
import { CONTAINERFILE, IMAGE, LOCAL_BASE, PUBLIC_BASE, ROOT, VERSION } from "./image-refs.ts";
import { imageExists, imageSize, megabytes } from "./podman.ts";

/** The base: `--base`, else the local base when asked for or present, else docker.io's. */
export function chooseBase(o: BuildOptions, localExists: () => boolean): string {
  return o.base ?? (o.localBase || localExists() ? LOCAL_BASE : PUBLIC_BASE);
}

export const IMAGE_TAGS = [`${IMAGE}:${VERSION}`, `${IMAGE}:latest`];

/** `podman build`'s arguments for the image on `from`, with the repository as its context. */
export function buildArgs(from: string): string[] {
  const args = ["build", "--format", "docker", "--build-arg", `BASE=${from}`];
  args.push("--build-arg", `VERSION=${VERSION}`);
  args.push("--ignorefile", `${CONTAINERFILE}.dockerignore`, "-f", CONTAINERFILE);
  for (const t of IMAGE_TAGS) args.push("-t", t);
  return [...args, ROOT];
}

export async function build(o: BuildOptions): Promise<void> {
  if (o.localBase && !imageExists(LOCAL_BASE)) await base({ force: true });
  const from = chooseBase(o, () => imageExists(LOCAL_BASE));
  if (!imageExists(from) && !(await registryReachable())) {
    throw new ImageError(`no ${from} here and no registry answers: npm run image -- base first`);
  }
  console.log(`building ${IMAGE_TAGS.join(", ")} on ${from}`);
  const started = performance.now();
  const r = spawnSync("podman", buildArgs(from), { stdio: "inherit" });
  if (r.status !== 0) throw new ImageError(`podman build failed (exit ${r.status})`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`${IMAGE_TAGS[0]}: ${megabytes(imageSize(IMAGE_TAGS[0]))}, built in ${seconds} s`);
}
