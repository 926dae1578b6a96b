/**
 * A pass-through HTTP proxy in front of a backend that records each request it passes (method
 * and path): a test asks it what reached the backend, whatever the backend is.
 */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface Passed {
  method: string;
  path: string;
}

export interface RecordingProxy {
  url: string;
  passed: Passed[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const to = new URL(target);
  const passed: Passed[] = [];
  const server = createServer((req, res) => {
    passed.push({ method: req.method ?? "GET", path: req.url ?? "/" });
    const out = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    passed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
