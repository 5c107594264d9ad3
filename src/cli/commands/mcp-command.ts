import path from 'node:path';
import { createContainer } from '../../container/create-container.js';
import type { SerializedThread } from '../../threads/agent-thread.js';
import { allowedHostsFromEnv } from '../../http/allowed-hosts-env.js';
import { UsageError } from '../cli-error.js';
import type { CliCommand } from '../cli-command.js';
import { writeLine, type CliIO } from '../cli-io.js';
import { parseCommandArgs } from '../parse-command-args.js';
import { SERVE_OPTIONS, serveArgs, servedAgents, servePort } from './serve-command-args.js';
import { DEFAULT_THREADS_DIR, ThreadRegistry } from '../thread-registry.js';

const HELP = `Usage: skein mcp serve --config <file> --agent <name> [--agent <name> ...] [--threads-dir <dir>]
                       [--http [--port <n>] [--host <addr> [--expose]] [--allowed-host <host>]...]

Serves the chosen agents over the Model Context Protocol: each agent is a tool "ask_<agent>"
taking "input" (text) and an optional "thread" id, and answering with the reply and the thread
id to continue with. Over stdio by default (for MCP clients that start the server); with --http,
Streamable HTTP at http://<host>:<port>/mcp. Threads are saved in the thread registry (like
"skein chat", listed by "skein threads list"); with a durable store the messages stay in it.

Options:
  --config <file>      the Skein config file (YAML or JSON)
  --agent <name>       an agent to serve (repeat for more)
  --http               serve Streamable HTTP instead of stdio
  --port <n>           HTTP port (default: $PORT or 4320; 0 picks a free one)
  --host <addr>        HTTP address to bind (default 127.0.0.1)
  --expose             allow a non-loopback --host (other machines can then run your agents;
                       there is no authentication)
  --allowed-host <h>   also answer this Host (name or name:port); repeatable, and
                       SKEIN_ALLOWED_HOSTS=a,b adds more. Other Hosts and Origins get 403
  --threads-dir <dir>  the thread registry (default: ${DEFAULT_THREADS_DIR} under the current directory)
  -h, --help           show this help`;

export const mcpCommand: CliCommand = {
  name: 'mcp',
  summary: 'serve configured agents as MCP tools (mcp serve, stdio or Streamable HTTP)',
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const values = serveArgs('mcp', HELP, io, parseCommandArgs('mcp', { args, allowPositionals: true, options: { ...SERVE_OPTIONS, http: { type: 'boolean' } } }));
    if (!values) return 0;
    if (!values.agent?.length) throw new UsageError('--agent <name> is required (repeat it to serve several agents)', 'mcp');
    const port = values.http ? servePort(values.port ?? process.env.PORT ?? '4320', 'mcp') : 0;

    const config = path.resolve(io.cwd, values.config);
    const container = await createContainer(config);
    const agents = servedAgents(container, values.agent, config);

    const registry = new ThreadRegistry(path.resolve(io.cwd, values['threads-dir'] ?? DEFAULT_THREADS_DIR));
    const { McpAgentServer } = await import('skein/mcp');
    const server = new McpAgentServer({
      agents,
      newThreadId: ThreadRegistry.newId,
      threads: {
        load: async (id) => (ThreadRegistry.isId(id) ? (await registry.read(id))?.thread : undefined),
        save: async (id, agent, thread: SerializedThread) => {
          const now = new Date().toISOString();
          const earlier = await registry.read(id);
          await registry.write({ id, agent, config, provider: thread.provider, createdAt: earlier?.createdAt ?? now, updatedAt: now, thread });
        },
      },
    });
    const stop = () => {
      void server.close().finally(() => container.unbindAllAsync().finally(() => process.exit(0)));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (values.http) {
      const allowedHosts = [...(values['allowed-host'] ?? []), ...allowedHostsFromEnv()];
      const url = await server.listenHttp({ port, host: values.host, expose: values.expose, allowedHosts });
      writeLine(io.stdout, `MCP server for ${values.agent.map((a) => `ask_${a}`).join(', ')} at ${url}`);
      writeLine(io.stderr, 'Ctrl-C stops it.');
    } else {
      // stdout carries the protocol: nothing else may be written there.
      await server.serveStdio();
      process.stdin.once('end', stop);
    }
    return new Promise<number>(() => {});
  },
};
