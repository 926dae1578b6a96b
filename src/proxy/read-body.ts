/**
 * Reads a request body straight from Node's IncomingMessage with a size limit: an oversized
 * Content-Length is refused before a byte is read, a chunked body as soon as it passes the limit.
 * With a budget (body-budget.ts) the bytes are reserved there as well: a declared length up
 * front, a chunked body as it arrives. A body that resolves keeps its bytes reserved (the
 * caller gives back `body.length` when the request ends); one that fails gives them back here.
 */
import type { IncomingMessage } from "node:http";
import { Errors } from "../errors.ts";
import type { BodyBudget } from "./body-budget.ts";

export function readBody(
  incoming: IncomingMessage,
  limit: number,
  budget: BodyBudget | null = null,
): Promise<Buffer> {
  const declared = Number(incoming.headers["content-length"]);
  const known = Number.isFinite(declared) && declared >= 0;
  if (known && declared > limit) return Promise.reject(Errors.payloadTooLarge(limit));
  let reserved = 0;
  if (budget !== null && known) {
    if (!budget.take(declared)) return Promise.reject(Errors.bodyBudgetFull());
    reserved = declared;
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: unknown, value?: Buffer) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
      if (err) {
        budget?.give(reserved);
        reject(err);
        return;
      }
      // Keep exactly the body's bytes reserved.
      const body = value as Buffer;
      budget?.give(reserved - body.length);
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        incoming.pause();
        done(Errors.payloadTooLarge(limit));
        return;
      }
      if (budget !== null && size > reserved) {
        if (!budget.take(size - reserved)) {
          incoming.pause();
          done(Errors.bodyBudgetFull());
          return;
        }
        reserved = size;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    const onError = () => done(Errors.clientClosed());
    const onClose = () => {
      if (!incoming.readableEnded) done(Errors.clientClosed());
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
    if (incoming.readableEnded) onEnd();
  });
}
