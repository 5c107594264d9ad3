import { createServer, type Server } from 'node:http';

/** Forwards to an MCP server over HTTP and counts the JSON-RPC `tools/call` and `tools/list` requests it sees. */
export class CountingProxy {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly counter: { calls: number; lists: number },
  ) {}

  /** `tools/call` requests so far. */
  get calls(): number {
    return this.counter.calls;
  }

  /** `tools/list` requests so far. */
  get lists(): number {
    return this.counter.lists;
  }

  static async start(target: string): Promise<CountingProxy> {
    const counter = { calls: 0, lists: 0 };
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (/"method"\s*:\s*"tools\/call"/.test(body.toString())) counter.calls++;
        if (/"method"\s*:\s*"tools\/list"/.test(body.toString())) counter.lists++;
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && k !== 'host' && k !== 'content-length')) as Record<string, string>;
        fetch(target, { method: req.method, headers, body: body.length ? body : undefined })
          .then(async (upstream) => {
            const headers: Record<string, string> = {};
            upstream.headers.forEach((value, key) => (headers[key] = value));
            res.writeHead(upstream.status, headers);
            // Streamed through as it comes: MCP answers may be server-sent events.
            const reader = upstream.body?.getReader();
            for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader!.read()) res.write(chunk.value);
            res.end();
          })
          .catch(() => res.destroy());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return new CountingProxy(server, `http://127.0.0.1:${port}/mcp`, counter);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
