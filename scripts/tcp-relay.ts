/**
 * The bare TCP relay `bench:proxy` measures beside the router: the floor under any proxy
 * written in Node. The relay is src/bench/overhead/tcp-relay.ts.
 *
 *   node scripts/tcp-relay.ts <upstream host:port>   (prints {"url": …} on stdout when ready)
 */
import { hostPort, listenTcpRelay, TCP_RELAY_SPEC } from "../src/bench/overhead/tcp-relay.ts";
import { flagError, scriptArgs } from "../src/bench/script-entry.ts";

const { positionals } = scriptArgs(TCP_RELAY_SPEC);
const upstream = hostPort(positionals[0]);
if (upstream === null)
  flagError(
    TCP_RELAY_SPEC,
    `<host:port> must be a host and a port, got ${JSON.stringify(positionals[0])}`,
  );
process.on("SIGTERM", () => process.exit(0));
const relay = await listenTcpRelay(upstream);
process.stdout.write(`${JSON.stringify({ url: relay.url })}\n`);
