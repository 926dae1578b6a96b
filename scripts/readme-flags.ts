/**
 * The docs' generated parts (flag tables, quoted `npx maitred …` outputs) rewritten from the
 * command tree (src/bench/checks/readme-flags.ts, with src/cli/flag-rows.ts's generators).
 * test/readme.test.ts fails when one is stale.
 *
 *   npm run readme:flags                      rewrite the tables and the quick outputs
 *   npm run readme:flags -- --slow            also rerun the outputs marked slow (seconds each)
 *   npm run readme:flags -- --check [--slow]  write nothing; list what is stale, exit 1 if any
 *   npm run readme:flags -- bench compare     print one command's table
 */
import { fileURLToPath } from "node:url";
import { runReadmeFlags } from "../src/bench/checks/readme-flags.ts";
import * as flagRows from "../src/cli/flag-rows.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const r = await runReadmeFlags(process.argv.slice(2), root, flagRows);
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
process.exitCode = r.exitCode;
