/**
 * What a route returns after writing its answer itself on Node's response (a relayed stream, a
 * held stream's keep-alives, the live page's events): it tells @hono/node-server that nothing
 * is left to write.
 *
 * @hono/node-server exports such a value (`RESPONSE_ALREADY_SENT`), but builds it with whatever
 * `Response` is global when its module is first loaded. Once a server of theirs has started, the
 * global is their lightweight `Response`, and a bodiless one of those takes their fast path,
 * which writes a head without reading the already-sent header: Node throws
 * ERR_HTTP_HEADERS_SENT and the adapter prints its stack trace. Which of the two a process gets
 * depends on import order (a library user who starts a Hono server before importing maitred, a
 * test process that loads many servers). undici's `Response` is a class of its own that no
 * server replaces, so this value always takes the path that reads the header.
 */
import { Response as PlainResponse } from "undici";

/** The header @hono/node-server reads to leave a response alone (its `X_ALREADY_SENT`). */
const ALREADY_SENT_HEADER = "x-hono-already-sent";

/**
 * One for every answer: nothing writes to it (where Hono merges headers set earlier into a
 * returned response, it does so on a copy), so a request pays for no construction.
 */
const ALREADY_SENT = new PlainResponse(null, {
  headers: { [ALREADY_SENT_HEADER]: "true" },
}) as unknown as Response;

export const alreadySent = (): Response => ALREADY_SENT;
