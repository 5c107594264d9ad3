import { expect } from 'chai';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestBodyTooLargeError, readRequestBody } from 'skein';

const LIMIT = 1_000;

/** Sends `body` in pieces of `piece` bytes, chunked (no content-length) unless `declare` is set. */
function post(url: string, body: string, options: { piece?: number; declare?: boolean } = {}): Promise<{ status: number; connection?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = options.declare ? { 'content-length': String(Buffer.byteLength(body)) } : { 'transfer-encoding': 'chunked' };
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ...(res.headers.connection ? { connection: res.headers.connection } : {}), text }));
    });
    req.on('error', reject);
    const piece = options.piece ?? 100;
    for (let i = 0; i < body.length; i += piece) req.write(body.slice(i, i + piece));
    req.end();
  });
}

describe('readRequestBody: a server reads a whole body within its limit, and refuses a larger one while it arrives', () => {
  let server: Server;
  let url: string;
  const refused: RequestBodyTooLargeError[] = [];

  before(async () => {
    server = createServer((req, res) => {
      readRequestBody(req, LIMIT).then(
        (body) => res.writeHead(200).end(`${body.length}:${body.toString('utf8').slice(-3)}`),
        (error: unknown) => {
          if (error instanceof RequestBodyTooLargeError) refused.push(error);
          res.writeHead(error instanceof RequestBodyTooLargeError ? error.status : 500, { connection: 'close' }).end(String((error as Error).message));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => refused.splice(0));

  it('a body of exactly the limit is read whole, declared or chunked, in one piece or many', async () => {
    const body = 'a'.repeat(LIMIT - 3) + 'end';
    expect(await post(url, body, { declare: true })).to.deep.include({ status: 200, text: `${LIMIT}:end` });
    expect(await post(url, body)).to.deep.include({ status: 200, text: `${LIMIT}:end` });
    expect(await post(url, body, { piece: LIMIT })).to.deep.include({ status: 200, text: `${LIMIT}:end` });
    expect(await post(url, '')).to.deep.include({ status: 200, text: '0:' });
  });

  it('a declared content-length over the limit is refused before the body is read, naming both sizes', async () => {
    const reply = await post(url, 'b'.repeat(LIMIT + 1), { declare: true });
    expect(reply).to.deep.include({ status: 413, text: `The body is ${LIMIT + 1} bytes; this server accepts at most ${LIMIT}.` });
    expect(refused[0]).to.include({ limit: LIMIT, declared: LIMIT + 1, status: 413, name: 'RequestBodyTooLargeError' });
  });

  it('a chunked body is refused at the chunk that passes the limit; the client still gets the 413 (the rest flows by unread)', async () => {
    const reply = await post(url, 'c'.repeat(LIMIT * 20), { piece: 333 });
    expect(reply).to.deep.include({ status: 413, connection: 'close', text: `The body is over ${LIMIT} bytes, the most this server accepts.` });
    expect(refused).to.have.length(1);
    expect(refused[0]!.declared).to.equal(undefined);
    // The server goes on serving.
    expect(await post(url, 'ok')).to.deep.include({ status: 200, text: '2:ok' });
  });
});
