import { parsePort } from '../../testing/emulator/cli.js';
import { DEVUI_ARGS, serveDevUIUntilStopped } from '../../devui/serve-dev-ui.js';
import { UsageError } from '../cli-error.js';
import type { CliCommand } from '../cli-command.js';
import { printedHelp, writeLine, type CliIO } from '../cli-io.js';
import { parseCommandArgs } from '../parse-command-args.js';

const HELP = `Usage: skein devui --config <file> [--port <n>] [--host <addr> [--expose]]
                   [--allowed-host <host>]... [--no-token] [--threads-dir <dir>] [--no-emulator]
                   [--capture-content]

Starts the Dev UI on 127.0.0.1: chat with the agents the config describes (tokens stream in,
tool calls inline, a stop button), and browse, continue, download, load and delete threads.
Without OPENAI_API_KEY (and OPENAI_BASE_URL) it starts the local emulator and points
\${OPENAI_BASE_URL} at it. Prints the address to open, with a new access token each start.
Runs until Ctrl-C.

Options:
  --config <file>        JSON or YAML config (required)
  --port <n>             port to listen on (default: $PORT or 4310; 0 picks a free one)
  --host <addr>          address to bind (default 127.0.0.1)
  --expose               allow a non-loopback --host (other machines can then run your agents)
  --allowed-host <host>  also answer this Host (name or name:port); repeatable, and
                         SKEIN_ALLOWED_HOSTS=a,b adds more. Others get 403
  --no-token             no access token: any local program can use the API (warns)
  --threads-dir <dir>    where threads are kept (default .skein/devui-threads)
  --no-emulator          never start the emulator
  --capture-content      keep each model call's request and response messages in the turn traces
  -h, --help             show this help`;

export const devuiCommand: CliCommand = {
  name: 'devui',
  summary: 'chat with configured agents and inspect threads in a browser',
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const { values } = parseCommandArgs('devui', { args, options: DEVUI_ARGS });
    if (printedHelp(values, io, HELP)) return 0;
    if (!values.config) throw new UsageError('--config <file> is required', 'devui');
    let port: number;
    try {
      port = parsePort(values.port ?? process.env.PORT ?? '4310');
    } catch (error) {
      throw new UsageError((error as Error).message, 'devui');
    }
    await serveDevUIUntilStopped(
      { ...values, config: values.config },
      port,
      (line) => writeLine(io.stdout, line),
      (line) => writeLine(io.stderr, line),
    );
    writeLine(io.stderr, 'Dev UI running; Ctrl-C stops it.');
    return new Promise<number>(() => {});
  },
};
