import path from 'node:path';
import { readConfigFile } from '../../container/config-file.js';
import { createContainer } from '../../container/create-container.js';
import { ConfigurationError } from '../../errors/skein-error.js';
import type { AgUiPluginSettings, AgUiServeSettings } from 'skein/ag-ui';
import type { CliCommand } from '../cli-command.js';
import { writeLine, type CliIO } from '../cli-io.js';
import { parseCommandArgs } from '../parse-command-args.js';
import { SERVE_OPTIONS, launchDurableAgents, serveArgs, servedAgents, servePort, shutdownDurable } from './serve-command-args.js';

export const DEFAULT_AG_UI_THREADS_DIR = '.skein/ag-ui-threads';

const HELP = `Usage: skein ag-ui serve --config <file> [--agent <name> ...] [--port <n>] [--host <addr> [--expose]]
                         [--cors-origin <origin>]... [--allowed-host <host>]... [--threads-dir <dir>]

Serves the configured agents over AG-UI (the protocol web front ends such as CopilotKit speak):
each agent answers POST http://<host>:<port>/agents/<name> with a RunAgentInput and streams the
run as AG-UI events. Each threadId is a Skein thread in the agent's message store (or on its
service); thread records are kept in --threads-dir, so conversations outlive the server.
Agents with durability: in the config run durably (a run goes on when the client leaves; the
same runId with no new messages reads the rest). Predictive state rules come from
plugins.ag-ui.server.predictState.<agent>.
Settings may also come from the config file (plugins.ag-ui.server); options here win.

Options:
  --config <file>        the Skein config file (YAML or JSON)
  --agent <name>         an agent to serve (repeat for more; default: plugins.ag-ui.server.agents, else all)
  --port <n>             port (default: $PORT, else plugins.ag-ui.server.port, else 4330; 0 picks a free one)
  --host <addr>          address to bind (default 127.0.0.1)
  --expose               allow a non-loopback --host (the server has no authentication: put it
                         behind one, or use AgUiServer with an authenticate hook)
  --cors-origin <o>      an origin whose pages may call the server (repeatable)
  --allowed-host <h>     also answer this Host (name or name:port); repeatable, and
                         SKEIN_ALLOWED_HOSTS=a,b adds more
  --threads-dir <dir>    where thread records are kept (default: ${DEFAULT_AG_UI_THREADS_DIR})
  -h, --help             show this help`;

export const agUiCommand: CliCommand = {
  name: 'ag-ui',
  summary: 'serve configured agents to web front ends over AG-UI (ag-ui serve)',
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const values = serveArgs('ag-ui', HELP, io, parseCommandArgs('ag-ui', { args, allowPositionals: true, options: { ...SERVE_OPTIONS, 'cors-origin': { type: 'string', multiple: true } } }));
    if (!values) return 0;
    const config = path.resolve(io.cwd, values.config);
    const { config: resolved, problems } = await readConfigFile(config);
    if (problems.length) throw new ConfigurationError(problems);
    const container = createContainer(resolved);
    const { AgUiPluginSettings, AgUiServer, FileAgUiThreadStore } = await import('skein/ag-ui');
    const settings: AgUiServeSettings = container.isBound(AgUiPluginSettings) ? (container.get<AgUiPluginSettings>(AgUiPluginSettings).server ?? {}) : {};
    const port = servePort(values.port ?? process.env.PORT ?? String(settings.port ?? 4330), 'ag-ui');
    const names = values.agent?.length ? values.agent : (settings.agents ?? Object.keys(resolved.agents ?? {}));
    if (!names.length) throw new ConfigurationError([`agents: ${config} defines no agent to serve.`]);
    const durable = await launchDurableAgents(container, names, resolved.agents);
    // Agents with `durability:` run durably (docs/durable.md); predictState rules come from the settings.
    const agents = Object.fromEntries(
      Object.entries(servedAgents(container, names, config)).map(([name, agent]) => {
        const face = durable.get(name);
        const predictState = settings.predictState?.[name];
        return [name, { agent, ...(face ? { durable: face } : {}), ...(predictState ? { predictState } : {}) }];
      }),
    );
    const server = new AgUiServer({
      agents,
      basePath: settings.basePath,
      threads: new FileAgUiThreadStore(path.resolve(io.cwd, values['threads-dir'] ?? settings.threadsDir ?? DEFAULT_AG_UI_THREADS_DIR)),
      corsOrigins: [...(settings.corsOrigins ?? []), ...(values['cors-origin'] ?? [])],
      allowedHosts: [...(settings.allowedHosts ?? []), ...(values['allowed-host'] ?? [])],
      maxBodyBytes: settings.maxBodyBytes,
      keepPartial: settings.keepPartial,
      logger: { warn: (message) => writeLine(io.stderr, `warning: ${message}`), error: (message, error) => writeLine(io.stderr, `${message}: ${error instanceof Error ? error.message : String(error)}`) },
    });
    const url = await server.listen(port, values.host ?? settings.host ?? '127.0.0.1', { expose: values.expose ?? settings.expose ?? false });
    for (const p of server.paths) writeLine(io.stdout, `AG-UI agent at ${url}${p}`);
    writeLine(io.stderr, 'Ctrl-C stops it.');
    const stop = () => {
      void server.close().finally(() => shutdownDurable(durable).finally(() => container.unbindAllAsync().finally(() => process.exit(0))));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return new Promise<number>(() => {});
  },
};
