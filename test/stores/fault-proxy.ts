import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';

/**
 * When the proxy cuts the connection carrying a matched request:
 * - `before-forward`: the request never reaches the server (nothing can have been written);
 * - `after-reply`: the request reaches the server and the server's complete reply arrives at the
 *   proxy (so the write has been done), but the reply is dropped and the client's connection cut.
 */
export type CutMode = 'before-forward' | 'after-reply';

export interface CutRule {
  mode: CutMode;
  /** Whether a client->server chunk is the request to cut at (its bytes read as latin1). */
  matches(chunk: string): boolean;
  /**
   * Whether the server bytes received since the request was forwarded hold its complete reply;
   * `'pass'` forwards them and keeps waiting (e.g. a NOSCRIPT reply the client answers with a retry).
   */
  replyDone(reply: Buffer): boolean | 'pass';
}

/**
 * A TCP proxy on 127.0.0.1 (random port) in front of a real server, that cuts one connection at
 * a chosen request: the "dropped connection mid-append" of a real network, made deterministic.
 */
export class FaultProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #rule: CutRule | undefined;
  /** How many connections this proxy has cut. */
  cuts = 0;
  /** How many matched requests reached the server. */
  forwardedMatches = 0;

  private constructor(
    server: Server,
    readonly port: number,
  ) {
    this.#server = server;
  }

  static async start(upstreamHost: string, upstreamPort: number): Promise<FaultProxy> {
    const holder: { proxy?: FaultProxy } = {};
    const server = createServer((client) => holder.proxy!.#pipe(client, upstreamHost, upstreamPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.proxy = new FaultProxy(server, (server.address() as AddressInfo).port);
    return holder.proxy;
  }

  /** Cut the next connection that sends a request `rule` matches; later traffic passes. */
  cutNext(rule: CutRule): void {
    this.#rule = rule;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #pipe(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    this.#sockets.add(client).add(upstream);
    let pending: { rule: CutRule; reply: Buffer } | undefined;
    const cut = () => {
      this.cuts++;
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      const rule = this.#rule;
      if (rule && !pending && rule.matches(chunk.toString('latin1'))) {
        this.#rule = undefined;
        if (rule.mode === 'before-forward') return cut();
        pending = { rule, reply: Buffer.alloc(0) };
        this.forwardedMatches++;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pending) return void client.write(chunk);
      pending.reply = Buffer.concat([pending.reply, chunk]);
      const done = pending.rule.replyDone(pending.reply);
      if (done === 'pass') {
        client.write(pending.reply);
        pending.reply = Buffer.alloc(0);
      } else if (done) {
        pending = undefined;
        cut();
      }
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  }
}

/** A RESP reply is complete enough to know the script ran: Redis replies only after running it. */
export function redisScriptReplyDone(reply: Buffer): boolean | 'pass' {
  const text = reply.toString('latin1');
  if (!text.includes('\r\n')) return false;
  // NOSCRIPT: the script was not cached; ioredis sends EVAL next, which the proxy still watches.
  if (text.startsWith('-NOSCRIPT')) return 'pass';
  return true;
}

/**
 * PostgreSQL backend messages are `type(1) length(4) body`; the reply to one extended-protocol
 * query ends with ReadyForQuery (`Z`), sent after the implicit transaction committed.
 */
export function postgresReplyDone(reply: Buffer): boolean {
  let at = 0;
  while (at + 5 <= reply.length) {
    const type = String.fromCharCode(reply[at]!);
    const length = reply.readUInt32BE(at + 1);
    if (at + 1 + length > reply.length) return false;
    if (type === 'Z') return true;
    at += 1 + length;
  }
  return false;
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that accepts connections and never answers: a hung server or a black-holed link. */
export async function silentServer(): Promise<{ port: number; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
