import type { IncomingMessage } from 'node:http';
import { SkeinError } from '../errors/skein-error.js';

/** A request body over a server's limit: answer 413 and close the connection (the rest is not read). */
export class RequestBodyTooLargeError extends SkeinError {
  readonly status = 413;
  constructor(
    readonly limit: number,
    /** The size the request declared (`content-length`), when it declared one over the limit. */
    readonly declared?: number,
  ) {
    super(declared !== undefined ? `The body is ${declared} bytes; this server accepts at most ${limit}.` : `The body is over ${limit} bytes, the most this server accepts.`);
  }
}

/**
 * The whole body of a request, refused with `RequestBodyTooLargeError` as soon as it is known to
 * pass `limit` bytes: from its `content-length`, or while it arrives (chunked). A refused body's
 * rest flows by unread, so the 413 can still be sent; send it with `connection: close`.
 * (Events, not the async iterator: this runs on every request of the servers.)
 */
export function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new RequestBodyTooLargeError(limit, declared));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData).off('end', onEnd).off('error', reject);
      req.resume();
      reject(new RequestBodyTooLargeError(limit));
    };
    const onEnd = () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    req.on('data', onData).once('end', onEnd).once('error', reject);
  });
}
