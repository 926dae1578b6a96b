/**
 * The floor under any proxy written in Node: a bare TCP relay that copies bytes both ways
 * between each client connection and a connection of its own to the upstream, parsing
 * nothing. bench-proxy.ts runs it in its own process in front of the same upstream as
 * maitred and reads its CPU the same way: what it costs per request and per SSE event is
 * what the kernel and Node's socket layer charge for every read and write, before any work
 * of maitred's own.
 *
 *   node scripts/tcp-relay.ts <upstream host:port>   (prints {"url": …} on stdout when ready)
 */
import { connect, createServer } from "node:net";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { flagError, scriptArgs } from "../src/bench/script-entry.ts";

const SPEC = {
  name: "tcp-relay",
  usage: "node scripts/tcp-relay.ts <host:port>",
  summary:
    'The floor under any proxy written in Node: a bare TCP relay that copies bytes both ways; npm run bench:proxy starts it itself. Prints {"url": …} on stdout when ready.',
  runtime: "until stopped (Ctrl-C or SIGTERM)",
  flags: {},
  positionals: [{ name: "<host:port>", description: "the upstream, e.g. 127.0.0.1:8000" }],
} satisfies ScriptSpec;
const { positionals } = scriptArgs(SPEC);
const [host, port] = positionals[0].split(":");
if (!host || !port || !/^\d+$/.test(port) || Number(port) > 65_535)
  flagError(SPEC, `<host:port> must be a host and a port, got ${JSON.stringify(positionals[0])}`);

const server = createServer({ noDelay: true }, (client) => {
  const upstream = connect({ host, port: Number(port), noDelay: true });
  // Each side's end ends the other (pipe), after what was buffered for it is written; only an
  // error tears both down at once.
  client.pipe(upstream);
  upstream.pipe(client);
  const broken = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", broken);
  upstream.on("error", broken);
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.on("SIGTERM", () => process.exit(0));
