/**
 * Requests Node's HTTP parser refuses before any route sees them (a bad header byte, headers
 * over the size limit, a request that never finished arriving, an `Expect` other than
 * `100-continue`) get the same OpenAI envelope as every other error, and their connection is
 * closed: after a parse error the rest of the bytes on it cannot be trusted.
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { Errors, errorBodyJson, type MaitredError, toErrorResponse } from "../errors.ts";
import { dialectOfPath } from "./dialects/all-dialects.ts";

/** The envelope for one of Node's parser errors. */
function errorOf(err: Error & { code?: string }): MaitredError {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return Errors.headersTooLarge();
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return Errors.requestTimeout();
    default:
      return Errors.malformedRequest(err.code ?? "unparsable");
  }
}

/** The server's `clientError` listener. */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // A client that is gone, or one whose response has begun (Node's own default handler checks
  // the same field), gets nothing more.
  const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || current?.headersSent === true) {
    socket.destroy();
    return;
  }
  const error = errorOf(err);
  const body = errorBodyJson(error);
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** The server's `checkExpectation` listener: only `100-continue` is understood (Node's rule). */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  const error = Errors.expectationFailed(String(req.headers.expect));
  // The envelope of the route's own dialect (Anthropic's on /v1/messages…).
  const path = (req.url ?? "/").split("?")[0];
  const body = JSON.stringify(dialectOfPath(path).errorBody(toErrorResponse(error)));
  res.shouldKeepAlive = false;
  res.writeHead(error.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}
