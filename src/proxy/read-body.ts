/**
 * Reads a request body straight from Node's IncomingMessage with a size limit: an oversized
 * Content-Length is refused before a byte is read, a chunked body as soon as it passes the limit.
 */
import type { IncomingMessage } from "node:http";
import { Errors } from "../errors.ts";

export function readBody(incoming: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(incoming.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit)
    return Promise.reject(Errors.payloadTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: unknown, value?: Buffer) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
      if (err) reject(err);
      else resolve(value as Buffer);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        incoming.pause();
        done(Errors.payloadTooLarge(limit));
        return;
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
