import { Emulator } from '../testing/emulator/emulator.js';
import { allowedHostsFromEnv } from '../http/allowed-hosts-env.js';
import { exitOnSignals } from '../http/exit-on-signals.js';
import { startDevUI } from './devui-server.js';

/** The command-line options of `skein devui` and `npm run devui` (node:util parseArgs form). */
export const DEVUI_ARGS = {
  config: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  expose: { type: 'boolean' },
  'allowed-host': { type: 'string', multiple: true },
  'no-token': { type: 'boolean' },
  'threads-dir': { type: 'string' },
  'no-emulator': { type: 'boolean' },
  'capture-content': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** What parseArgs gives for DEVUI_ARGS. */
export interface DevUIArgs {
  config?: string;
  host?: string;
  expose?: boolean;
  'allowed-host'?: string[];
  'no-token'?: boolean;
  'threads-dir'?: string;
  'no-emulator'?: boolean;
  'capture-content'?: boolean;
}

/**
 * Serves the Dev UI for a command line until SIGINT or SIGTERM, which close it and end the
 * process. `config` and `port` were checked by the caller (each reports usage errors its way).
 */
export async function serveDevUIUntilStopped(
  args: DevUIArgs & { config: string },
  port: number,
  print: (line: string) => void,
  warn: (line: string) => void,
): Promise<void> {
  const devui = await serveDevUI(
    {
      config: args.config,
      port,
      host: args.host,
      expose: args.expose,
      allowedHosts: args['allowed-host'],
      token: !args['no-token'],
      threadsDir: args['threads-dir'],
      emulator: !args['no-emulator'],
      captureContent: args['capture-content'] ? true : undefined,
    },
    print,
    warn,
  );
  exitOnSignals(() => devui.close());
}

export interface ServeDevUIOptions {
  config: string;
  port: number;
  host?: string;
  /** Needed for a non-loopback `host`: other machines can then reach the Dev UI. */
  expose?: boolean;
  /** Hosts the browser may use besides the loopback ones; SKEIN_ALLOWED_HOSTS adds more. */
  allowedHosts?: readonly string[];
  /** false: no access token (a warning says what that allows). */
  token?: boolean;
  threadsDir?: string;
  /** Start the local emulator when no OPENAI_API_KEY / OPENAI_BASE_URL is set (default true). */
  emulator?: boolean;
  /** Keep model request and response messages in the turn traces (`--capture-content`). */
  captureContent?: boolean;
  env?: NodeJS.ProcessEnv;
}

/**
 * What `skein devui` and `npm run devui` run: the Dev UI over a config file, on the local
 * emulator when no key is set, so the samples work offline. Prints the address to open (with
 * its access token); warnings go to `warn`. Resolves once it listens.
 */
export async function serveDevUI(
  options: ServeDevUIOptions,
  print: (line: string) => void,
  warn: (line: string) => void = print,
): Promise<{ url: string; pageUrl: string; close(): Promise<void> }> {
  const env = { ...(options.env ?? process.env) };
  const allowedHosts = [...(options.allowedHosts ?? []), ...allowedHostsFromEnv(env)];
  let emulator: Emulator | undefined;
  if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL && options.emulator !== false) {
    emulator = await Emulator.start();
    env.OPENAI_BASE_URL = emulator.openaiBaseURL;
    print(`No OPENAI_API_KEY: using the local emulator at ${emulator.openaiBaseURL}`);
  }
  try {
    const devui = await startDevUI({
      config: options.config,
      port: options.port,
      host: options.host,
      expose: options.expose,
      allowedHosts,
      token: options.token === false ? false : undefined,
      threadsDir: options.threadsDir,
      captureContent: options.captureContent,
      env,
      warn,
    });
    print(`Skein Dev UI: ${devui.pageUrl}  (threads in ${devui.threads.directory})`);
    return {
      url: devui.url,
      pageUrl: devui.pageUrl,
      close: async () => {
        await Promise.all([devui.close(), emulator?.stop()]);
      },
    };
  } catch (error) {
    await emulator?.stop();
    throw error;
  }
}
