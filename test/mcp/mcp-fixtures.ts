import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { type IncomingMessage, type ServerResponse, createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpStdioServerConfig } from 'skein/mcp';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');

/** server-everything from node_modules, as its README runs it. */
export const EVERYTHING = path.join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = path.join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const FAULT_SERVER = path.join(here, 'fixtures/fault-server.js');

export function everythingStdio(): McpStdioServerConfig {
  return { command: process.execPath, args: [EVERYTHING, 'stdio'] };
}

export function faultServer(mode: string, env: Record<string, string> = {}): McpStdioServerConfig {
  return { command: process.execPath, args: [FAULT_SERVER, mode], env };
}

export async function tempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'skein-mcp-'));
}

export async function marks(file: string): Promise<string[]> {
  try {
    return (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** server-everything over Streamable HTTP (its `streamableHttp` mode, at /mcp) or legacy SSE (`sse`, at /sse), on a free port. */
export class EverythingHttp {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(mode: 'streamableHttp' | 'sse' = 'streamableHttp', fixedPort?: number): Promise<EverythingHttp> {
    const port = fixedPort ?? (await freePort());
    const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let log = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (/(listening|running) on port/.test(log)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${log}`)));
    });
    return new EverythingHttp(`http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`, child);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill();
    await exited;
  }
}

/** What a server that is not an MCP server answers to every request (POST and GET alike). */
export const GARBAGE_REPLIES = {
  // A web page where the MCP endpoint was expected (a wrong URL, a login page).
  'an HTML page': (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><html><body>Welcome</body></html>');
  },
  // An event stream that stays open and never carries a JSON-RPC message (a broken proxy or server).
  'an event stream of garbage': (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: this is not JSON-RPC\n\n');
    res.write('event: message\ndata: {"half":\n\n');
  },
} satisfies Record<string, (res: ServerResponse) => void>;

/** A plain HTTP server on 127.0.0.1 answering every request with one of GARBAGE_REPLIES. */
export class GarbageHttp {
  private constructor(
    readonly url: string,
    private readonly server: ReturnType<typeof createHttpServer>,
  ) {}

  static async start(reply: (res: ServerResponse) => void): Promise<GarbageHttp> {
    const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      reply(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new GarbageHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
