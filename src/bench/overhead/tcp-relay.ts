/**
 * The floor under any proxy written in Node (`scripts/tcp-relay.ts`): a bare TCP relay that
 * copies bytes both ways between each client connection and a connection of its own to the
 * upstream, parsing nothing. `bench:proxy` runs it in its own process in front of the same
 * upstream as maitred and reads its CPU the same way: what it costs per request and per SSE
 * event is what the kernel and Node's socket layer charge for every read and write, before any
 * work of maitred's own.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import type { ScriptSpec } from "../script-args.ts";

export const TCP_RELAY_SPEC = {
  name: "tcp-relay",
  usage: "node scripts/tcp-relay.ts <host:port>",
  summary:
    'The floor under any proxy written in Node: a bare TCP relay that copies bytes both ways; npm run bench:proxy starts it itself. Prints {"url": …} on stdout when ready.',
  runtime: "until stopped (Ctrl-C or SIGTERM)",
  flags: {},
  positionals: [{ name: "<host:port>", description: "the upstream, e.g. 127.0.0.1:8000" }],
} satisfies ScriptSpec;

/** A relay listening on a loopback port of its own. */
export interface Relay {
  url: string;
  /** Stops listening and ends every connection still open. */
  close(): Promise<void>;
}

/** The upstream as the relay's argument names it (`127.0.0.1:8000`); null when it names none. */
export function hostPort(text: string): { host: string; port: number } | null {
  const [host, port] = text.split(":");
  if (!host || !port || !/^\d+$/.test(port) || Number(port) > 65_535) return null;
  return { host, port: Number(port) };
}

/**
 * `server` listening on a free loopback port, its connections kept so that `close` can end
 * them: a relay's clients hold keep-alive connections that would keep it open otherwise.
 */
export function listenLoopback(server: Server, onClose: () => void = () => {}): Promise<Relay> {
  const sockets = new Set<Socket>();
  server.on("connection", (sock: Socket) => {
    sockets.add(sock);
    sock.once("close", () => sockets.delete(sock));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((done) => {
            for (const sock of sockets) sock.destroy();
            onClose();
            server.close(() => done());
          }),
      }),
    );
  });
}

/** The bare TCP relay in front of `upstream`, in this process. */
export function listenTcpRelay(upstream: { host: string; port: number }): Promise<Relay> {
  const server = createServer({ noDelay: true }, (client) => {
    const toUpstream = connect({ host: upstream.host, port: upstream.port, noDelay: true });
    // Each side's end ends the other (pipe), after what was buffered for it is written; only an
    // error tears both down at once.
    client.pipe(toUpstream);
    toUpstream.pipe(client);
    const broken = () => {
      client.destroy();
      toUpstream.destroy();
    };
    client.on("error", broken);
    toUpstream.on("error", broken);
  });
  return listenLoopback(server);
}
