/**
 * A Skein agent served over AG-UI, and a small page that chats with it through the official
 * @ag-ui/client: text, a tool the server runs (get_weather), one that asks first (delete_file),
 * one the page runs (change_background), and a reload that picks the conversation up again.
 * Uses the real OpenAI API when OPENAI_API_KEY is set, the bundled emulator otherwise.
 *   npm run sample:ag-ui        (then open the printed address)
 */
import 'reflect-metadata';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AIAgent, agentToken, createContainer, tool } from 'skein';
import { AgUiServer, FileAgUiThreadStore } from 'skein/ag-ui';
import { openaiPlugin } from 'skein/openai';
import { sqliteStorePlugin } from 'skein/store-sqlite';
import { Emulator } from 'skein/testing';
import { z } from 'zod';
import { BrowserModules } from './browser-modules.js';
import { APP_JS, PAGE_HTML } from './page.js';

/** The repository (or app) root: where node_modules is. */
const ROOT = path.resolve(import.meta.dirname, '../../..');

export interface AgUiSample {
  url: string;
  /** Paths the tools "deleted" (the approval tool records each run). */
  deleted: string[];
  close(): Promise<void>;
}

export async function startAgUiSample(options: { port?: number; dataDir?: string } = {}): Promise<AgUiSample> {
  const apiKey = process.env.OPENAI_API_KEY;
  const emulator = apiKey ? undefined : await Emulator.start();
  const dataDir = options.dataDir ?? path.join(process.cwd(), '.skein', 'ag-ui-sample');
  const deleted: string[] = [];
  const container = createContainer({
    plugins: [openaiPlugin({ apiKey: apiKey ?? 'emulator', baseURL: emulator?.openaiBaseURL ?? process.env.OPENAI_BASE_URL }), sqliteStorePlugin({ path: path.join(dataDir, 'threads.db') })],
    tools: [
      tool({ name: 'get_weather', description: 'The weather in a city', parameters: z.object({ city: z.string() }), execute: ({ city }) => `Sunny, 21°C in ${city}` }),
      tool({
        name: 'delete_file',
        description: 'Deletes a file (asks the user first)',
        parameters: z.object({ path: z.string() }),
        requiresApproval: true,
        execute: ({ path: file }) => (deleted.push(file), `deleted ${file}`),
      }),
    ],
    agents: { helper: { client: 'openai-chat', model: process.env.OPENAI_MODEL ?? 'gpt-4.1', messageStore: 'sqlite', tools: ['get_weather', 'delete_file'] } },
  });
  const server = new AgUiServer({ agents: { helper: container.get<AIAgent>(agentToken('helper')) }, threads: new FileAgUiThreadStore(path.join(dataDir, 'ag-ui-threads')) });
  const modules = new BrowserModules(ROOT);
  const app = modules.rewrite(APP_JS, ROOT);
  const page = (req: IncomingMessage, res: ServerResponse) => {
    if (modules.serve(req, res)) return;
    const route = new URL(req.url ?? '/', 'http://x').pathname;
    if (route === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE_HTML);
    else if (route === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(app);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  };
  const url = await server.listen(options.port ?? 0, '127.0.0.1', { fallback: page });
  return {
    url,
    deleted,
    close: async () => {
      await server.close();
      await container.unbindAllAsync();
      await emulator?.stop();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sample = await startAgUiSample({ port: Number(process.env.PORT ?? 4331) });
  console.log(`${process.env.OPENAI_API_KEY ? 'Using the OpenAI API' : 'No OPENAI_API_KEY: using the local emulator'}.`);
  console.log(`Open ${sample.url}/ (the agent itself is at POST ${sample.url}/agents/helper). Ctrl-C stops it.`);
  const stop = () => void sample.close().finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
