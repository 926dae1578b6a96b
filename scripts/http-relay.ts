/**
 * The bare HTTP relay `bench:proxy` measures beside the router: Node's HTTP server and an
 * undici pool with nothing between, the floor of a proxy built as maitred is. The relay is
 * src/bench/overhead/http-relay.ts.
 *
 *   node scripts/http-relay.ts <upstream URL>   (prints {"url": …} on stdout when ready)
 */
import { HTTP_RELAY_SPEC, isHttpUrl, listenHttpRelay } from "../src/bench/overhead/http-relay.ts";
import { flagError, scriptArgs } from "../src/bench/script-entry.ts";

const {
  positionals: [upstreamUrl],
} = scriptArgs(HTTP_RELAY_SPEC);
if (!isHttpUrl(upstreamUrl))
  flagError(
    HTTP_RELAY_SPEC,
    `<upstream-url> must be an http(s) URL, got ${JSON.stringify(upstreamUrl)}`,
  );
process.on("SIGTERM", () => process.exit(0));
const relay = await listenHttpRelay(upstreamUrl);
process.stdout.write(`${JSON.stringify({ url: relay.url })}\n`);
