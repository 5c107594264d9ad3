import { type AddressInfo, type Server, type Socket, createConnection, createServer } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 to a real server, which a test can close (every open connection cut,
 * new ones refused) and reopen on the same port: a database outage with real sockets.
 */
export class TcpProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port = 0;

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await proxy.open();
    return proxy;
  }

  get port(): number {
    return this.#port;
  }

  /** Listens (again, on the same port once it has one). */
  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection(this.#target);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => this.#sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.#port, '127.0.0.1', () => resolve()));
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Cuts every connection and stops listening. */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
