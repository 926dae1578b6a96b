import { createServer } from "node:net";

/**
 * A loopback port free now, for a process the caller starts on a chosen port (HAProxy's
 * frontends, a router's inspector, Prometheus). Another process may take it before the caller
 * binds it; on loopback, between two lines of a script, that does not happen in practice.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
