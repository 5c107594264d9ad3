import { Emulator } from '../testing/emulator/emulator.js';
import { startDevUI } from './devui-server.js';

export interface ServeDevUIOptions {
  config: string;
  port: number;
  host?: string;
  threadsDir?: string;
  /** Start the local emulator when no OPENAI_API_KEY / OPENAI_BASE_URL is set (default true). */
  emulator?: boolean;
  env?: NodeJS.ProcessEnv;
}

/**
 * What `skein devui` and `npm run devui` run: the Dev UI over a config file, on the local
 * emulator when no key is set, so the samples work offline. Resolves once it listens.
 */
export async function serveDevUI(options: ServeDevUIOptions, print: (line: string) => void): Promise<{ url: string; close(): Promise<void> }> {
  const env = { ...(options.env ?? process.env) };
  let emulator: Emulator | undefined;
  if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL && options.emulator !== false) {
    emulator = await Emulator.start();
    env.OPENAI_BASE_URL = emulator.openaiBaseURL;
    print(`No OPENAI_API_KEY: using the local emulator at ${emulator.openaiBaseURL}`);
  }
  try {
    const devui = await startDevUI({ config: options.config, port: options.port, host: options.host, threadsDir: options.threadsDir, env });
    print(`Skein Dev UI: ${devui.url}  (threads in ${devui.threads.directory})`);
    return {
      url: devui.url,
      close: async () => {
        await Promise.all([devui.close(), emulator?.stop()]);
      },
    };
  } catch (error) {
    await emulator?.stop();
    throw error;
  }
}
