/**
 * The HAProxy configuration that puts maitred cells behind one address
 * (`maitred cells haproxy-config`). A cell is a `maitred serve` with its own backends; its
 * books live in its memory, so every request of a program must reach the same cell. HAProxy
 * finds the request's program id in maitred's own order (body `program_id`, `extra_body`,
 * headers, `nvext`), hashes it on a consistent ring (adding or removing a cell moves only that
 * cell's share of programs), checks each cell's `/health` (a draining cell answers 503 and
 * leaves the ring), retries on another cell a request that a dead cell never answered, and
 * spreads requests without a program id by least connections.
 *
 * The text is plain HAProxy 2.6 syntax (Debian 12's HAProxy); `haproxy -c -f` accepts it.
 */
import { IDENTITY_SOURCES, type IdentitySource } from "../config/identity-sources.ts";
import { CELL_NAME } from "../config/router-config.ts";
import { ConfigError } from "../errors.ts";

export interface Cell {
  name: string;
  /** host:port HAProxy connects to. */
  address: string;
}

export interface HaproxyConfigOptions {
  cells: readonly Cell[];
  /** Where HAProxy listens for clients, `ADDR:PORT`. */
  bind: string;
  /** Where HAProxy's own Prometheus metrics are served; loopback by default. */
  statsBind: string;
  identityOrder: readonly IdentitySource[];
  /** HAProxy's buffer size (`tune.bufsize`): the largest body whose program id it can read. */
  bodyBufferBytes?: number;
}

export const DEFAULT_BIND = "*:8300";
export const DEFAULT_STATS_BIND = "127.0.0.1:8404";

/**
 * Largest request body HAProxy reads to find a program id in it, by default. HAProxy sees a
 * body only as far as one buffer holds: past this size a body field cannot be read, and only a
 * header identity (`x-program-id`, a session header) keeps the request on its program's cell.
 * An agent's context of 100k tokens is about 400–600 KiB of JSON. Buffers this large cost
 * HAProxy CPU and latency on every request (measured in src/cells/README.md), so
 * fleets whose clients send a header identity can lower it to HAProxy's own 16 KiB.
 */
export const DEFAULT_BODY_BUFFER_BYTES = 1024 * 1024;
/** Room for a request's headers; HAProxy's own default is 16 KiB. */
export const MIN_BODY_BUFFER_BYTES = 16_000;

/** Health-check period: a dead or draining cell leaves the ring within two of these. */
export const CHECK_INTERVAL_MS = 1000;

/**
 * How long HAProxy waits on a client or a cell without a byte. maitred bounds every hold
 * under the 600 s after which the OpenAI SDKs give up, and a held stream gets a comment every
 * 15 s; a minute more than the SDKs' patience means HAProxy never cuts a request first.
 */
const IDLE_TIMEOUT = "11m";

/** `NAME=URL,...` as `--cells` takes it; throws ConfigError on anything HAProxy would not take. */
export function parseCells(text: string): Cell[] {
  const cells: Cell[] = [];
  for (const item of text.split(",").map((s) => s.trim())) {
    if (item === "") continue;
    const eq = item.indexOf("=");
    if (eq <= 0) throw new ConfigError("--cells", `expected NAME=URL, got ${JSON.stringify(item)}`);
    const name = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    if (!CELL_NAME.test(name)) {
      throw new ConfigError(
        "--cells",
        `cell name ${JSON.stringify(name)} must be 1–63 letters, digits, '.', '_' or '-', starting with a letter or digit`,
      );
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError("--cells", `${name}: ${JSON.stringify(raw)} is not a URL`);
    }
    if (url.protocol !== "http:") {
      throw new ConfigError(
        "--cells",
        `${name}: cells are reached over http:// (put TLS on HAProxy's bind), got ${url.protocol}`,
      );
    }
    if (url.pathname !== "/" || url.search !== "" || url.username !== "") {
      throw new ConfigError("--cells", `${name}: give the cell's origin only, http://HOST:PORT`);
    }
    const port = url.port === "" ? "80" : url.port;
    if (cells.some((c) => c.name === name)) {
      throw new ConfigError("--cells", `cell ${name} is named twice`);
    }
    cells.push({ name, address: `${url.hostname}:${port}` });
  }
  if (cells.length === 0) throw new ConfigError("--cells", "name at least one cell, NAME=URL");
  return cells;
}

/** `ADDR:PORT` (`*:8300`, `[::]:8300`, `10.0.0.5:8300`) as HAProxy's `bind` takes it. */
export function parseBind(text: string, flag: string): string {
  const m = /^(\*|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]*):(\d{1,5})$/.exec(text.trim());
  if (m === null || Number(m[2]) < 1 || Number(m[2]) > 65535) {
    throw new ConfigError(flag, `expected ADDR:PORT (e.g. *:8300), got ${JSON.stringify(text)}`);
  }
  return text.trim();
}

/** Each identity source as HAProxy fetches it; the first that yields a non-empty value wins. */
function fetchesOf(source: IdentitySource): string[] {
  switch (source) {
    case "program_id":
      return ["req.body,json_query('$.program_id')"];
    case "extra_body":
      return ["req.body,json_query('$.extra_body.program_id')"];
    // `req.fhdr(...,1)`: the first header of that name, whole (maitred reads the first, and a
    // comma is part of an id, not a list separator).
    case "x-program-id":
      return ["req.fhdr(x-program-id,1)"];
    case "session-headers":
      return [
        "req.fhdr(x-session-id,1)",
        "req.fhdr(x-claude-code-session-id,1)",
        "req.fhdr(x-dynamo-session-id,1)",
        "req.fhdr(session-id,1)",
      ];
    // A JSON string inside the body, and a router's own memory of responses: HAProxy reads
    // neither. Claude Code sends its session header too, and a Responses chain its client's.
    case "metadata":
    case "previous_response_id":
      return [];
    case "prompt_cache_key":
      return ["req.body,json_query('$.prompt_cache_key')"];
    case "nvext":
      return ["req.body,json_query('$.nvext.agent_context.trajectory_id')"];
    default: {
      const never: never = source;
      throw new Error(`unknown identity source ${String(never)}`);
    }
  }
}

/** The error a client gets when HAProxy itself answers: maitred's OpenAI envelope. */
function envelope(status: number, message: string, type: string, code: string): string {
  const body = JSON.stringify({ error: { message, type, param: null, code } });
  // HAProxy's single-quoted strings take everything literally but a quote and a backslash.
  return `http-error status ${status} content-type application/json string '${body}'`;
}

export function haproxyConfig(o: HaproxyConfigOptions): string {
  const bodyBuffer = o.bodyBufferBytes ?? DEFAULT_BODY_BUFFER_BYTES;
  const order = o.identityOrder.length > 0 ? o.identityOrder : IDENTITY_SOURCES;
  const fetches = order.flatMap(fetchesOf);
  const identity = fetches.map((f, i) =>
    i === 0
      ? `    http-request set-var(txn.program) ${f}`
      : `    http-request set-var(txn.program) ${f} unless { var(txn.program) -m len 1: }`,
  );
  const servers = o.cells.map((c) => `    server ${c.name} ${c.address}`);
  const tracked = o.cells.map(
    (c) => `    server ${c.name} ${c.address} track cells_by_program/${c.name}`,
  );
  const checkMs = `${CHECK_INTERVAL_MS}ms`;
  return `# maitred cells behind HAProxy (2.6 or newer).
# Generated by: maitred cells haproxy-config --cells ${o.cells.map((c) => `${c.name}=http://${c.address}`).join(",")} --bind ${o.bind} --body-buffer ${bodyBuffer}
# Check it with: haproxy -c -f <this file>

global
    # No maxconn: HAProxy sizes it from the file-descriptor limit it is given.
    # A request body is read up to this size to find its program id (see maitred's
    # src/cells/README.md): past it only a header identity keeps a program on its cell.
    tune.bufsize ${bodyBuffer}
    log stdout format raw local0 notice

defaults
    mode http
    log global
    option dontlognull
    timeout connect 2s
    # Longer than the OpenAI SDKs' 600 s: maitred bounds its holds under that, HAProxy never
    # cuts a request first.
    timeout client ${IDLE_TIMEOUT}
    timeout server ${IDLE_TIMEOUT}
    timeout http-request 60s
    timeout http-keep-alive 60s
    timeout queue 30s
    # The body is read before a cell is chosen, so its program id can be hashed.
    option http-buffer-request
    # A request a cell did not serve goes to another cell at once instead of failing: the
    # cell refused the connection or closed it without a byte of answer (it died), or answered
    # 503 before any byte (it drains and takes no new programs, or it has no healthy backend
    # or no room for the body). Each retry goes to a cell not yet tried; two bound the load a
    # fleet that is full everywhere sees from one request at three tries.
    retries 2
    option redispatch 1
    retry-on conn-failure empty-response 503
    http-reuse safe
    # HAProxy's own errors in the envelope every OpenAI client parses; SDKs retry these.
    ${envelope(503, "No maitred cell is available; retry shortly.", "ServiceUnavailableError", "no_cell_available")} hdr retry-after 1
    ${envelope(502, "The maitred cell closed the connection; retry the request.", "BadGatewayError", "cell_unavailable")}
    ${envelope(504, "The maitred cell did not answer in time.", "GatewayTimeoutError", "cell_timeout")}

frontend maitred
    bind ${o.bind}
    # The program id in maitred's order (${order.join(", ")}); the first found wins.
${identity.join("\n")}
    # A blank id is no id, as in maitred.
    http-request unset-var(txn.program) if { var(txn.program) -m len 0 }
    use_backend cells_by_program if { var(txn.program) -m found }
    default_backend cells_any

# Every request of a program goes to one cell: its id on a consistent-hash ring, so a cell
# that leaves or joins moves only its own share of programs.
backend cells_by_program
    balance hash var(txn.program)
    hash-type consistent sdbm avalanche
    option httpchk
    http-check send meth GET uri /health ver HTTP/1.1 hdr host maitred-cell
    http-check expect status 200
    default-server check inter ${checkMs} fall 2 rise 2 weight 100
${servers.join("\n")}

# Requests without a program id: the least busy cell; health follows the checks above.
backend cells_any
    balance leastconn
${tracked.join("\n")}

# HAProxy's own metrics (per-cell requests, errors, health, timings) for Prometheus.
frontend stats
    bind ${o.statsBind}
    http-request use-service prometheus-exporter if { path /metrics }
    http-request return status 404
`;
}
