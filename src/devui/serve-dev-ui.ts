import { Emulator } from '../testing/emulator/emulator.js';
import { allowedHostsFromEnv } from '../http/allowed-hosts-env.js';
import { startDevUI } from './devui-server.js';

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
