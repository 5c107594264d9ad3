import { ConfigurationError, SkeinError } from '../../errors/skein-error.js';
import { parsePort, serveEmulator } from '../../testing/emulator/cli.js';
import { UsageError } from '../cli-error.js';
import type { CliCommand } from '../cli-command.js';
import { printedHelp, writeLine, type CliIO } from '../cli-io.js';
import { parseCommandArgs } from '../parse-command-args.js';

const HELP = `Usage: skein emulator [--port <n>] [--api-key <key>] [--allowed-host <host>]...

Starts the offline service emulator: a loopback HTTP server speaking the OpenAI (Chat
Completions, Responses, Conversations, Assistants) and Foundry Agents wire formats with a small
deterministic model. Prints OPENAI_BASE_URL=... and runs until Ctrl-C.

It listens on 127.0.0.1 and answers only Host 127.0.0.1, localhost or [::1] with its port; any
other Host, a browser Origin of another site, and CORS preflights get 403, so no web page can
drive it (DNS rebinding included).

Point a config at it:
  plugins:
    openai: { apiKey: test, baseURL: <the printed URL> }

Options:
  --port <n>             port to listen on (default: $PORT or 4010; 0 picks a free one)
  --api-key <key>        require "Authorization: Bearer <key>" on every request
  --allowed-host <host>  also answer this Host (name, or name:port); repeatable, and
                         SKEIN_ALLOWED_HOSTS=a,b adds more
  -h, --help             show this help`;

export const emulatorCommand: CliCommand = {
  name: 'emulator',
  summary: 'start the offline service emulator',
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const { values } = parseCommandArgs('emulator', {
      args,
      options: { port: { type: 'string' }, 'api-key': { type: 'string' }, 'allowed-host': { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
    });
    if (printedHelp(values, io, HELP)) return 0;
    let port: number;
    try {
      port = parsePort(values.port ?? process.env.PORT ?? '4010');
    } catch (error) {
      throw new UsageError((error as Error).message, 'emulator');
    }
    const apiKey = values['api-key'];
    try {
      await serveEmulator({ port, allowedHosts: values['allowed-host'], ...(apiKey === undefined ? {} : { apiKey }) }, (line) => writeLine(io.stdout, line));
    } catch (error) {
      if (error instanceof ConfigurationError) throw error;
      throw new SkeinError(`Cannot start the emulator on port ${port}: ${(error as Error).message}. Pick another with --port (0 picks a free one).`, { cause: error });
    }
    writeLine(io.stderr, 'Emulator running; Ctrl-C stops it.');
    // The server keeps running; serveEmulator's signal handlers end the process.
    return new Promise<number>(() => {});
  },
};
