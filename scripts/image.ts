/**
 * maitred's container image with podman: a Node 24 base where no registry is reachable, the
 * image (config/deploy/Containerfile), and its check end to end (src/bench/checks/image.ts).
 *
 *   npm run image -- base | build | smoke [flags]
 */

import { runImage } from "../src/bench/checks/image.ts";
import { ImageError } from "../src/bench/checks/image-error.ts";

try {
  await runImage(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof ImageError)) throw err;
  console.error(`image: ${err.message}`);
  process.exitCode = 1;
}
