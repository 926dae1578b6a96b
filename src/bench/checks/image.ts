/**
 * `npm run image`: reads the command line and runs its command (image-base.ts, image-build.ts,
 * image-smoke.ts) with podman made usable first. A mistake the user can fix is an `ImageError`.
 */
import { IMAGE_USAGE, parseImageArgs } from "./image-args.ts";
import { base } from "./image-base.ts";
import { build } from "./image-build.ts";
import { smoke } from "./image-smoke.ts";
import { needPodman } from "./podman.ts";

export async function runImage(argv: readonly string[]): Promise<void> {
  const c = parseImageArgs(argv);
  if (c.command === "help") return void console.log(IMAGE_USAGE);
  needPodman();
  if (c.command === "base") return base(c);
  if (c.command === "build") return build(c);
  return smoke(c);
}
