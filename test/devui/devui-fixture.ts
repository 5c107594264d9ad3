import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Emulator, type EmulatorOptions } from 'skein/testing';
import { startDevUI, type DevUI, type DevUIOptions } from '../../src/devui/index.js';

/** The sample config `npm run devui` uses (in the source tree; it loads its tools plugin from dist). */
export const SAMPLE_CONFIG = fileURLToPath(new URL('../../../samples/devui/skein.yaml', import.meta.url));

export interface DevUIFixture {
  emulator: Emulator;
  devui: DevUI;
  threadsDir: string;
  /** fetch on the Dev UI with its access token (as a script sends it: `Authorization: Bearer`). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Closes the Dev UI and starts a new one on the same config, emulator and thread directory. */
  restart(): Promise<DevUI>;
  close(): Promise<void>;
}

export interface FixtureOptions extends Partial<Omit<DevUIOptions, 'config' | 'threadsDir' | 'env'>> {
  /** A config file; the sample config by default. `sqlite` writes one whose `assistant` keeps its threads in SQLite. */
  config?: string | 'sqlite';
  /** How the emulator lists a Responses input_items (its default: the whole context, as the service does). */
  responsesInputItems?: EmulatorOptions['responsesInputItems'];
}

/** The Dev UI on the sample config (or another), its agents on a fresh emulator, threads in a fresh directory. */
export async function startFixture(options: FixtureOptions = {}): Promise<DevUIFixture> {
  const { config: which, responsesInputItems, ...devuiOptions } = options;
  const emulator = await Emulator.start({ responsesInputItems });
  const threadsDir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-'));
  const config = which === 'sqlite' ? await writeSqliteConfig(threadsDir) : (which ?? SAMPLE_CONFIG);
  const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: emulator.openaiBaseURL };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_MODEL;
  const start = () => startDevUI({ port: 0, ...devuiOptions, config, threadsDir: path.join(threadsDir, 'index'), env });
  let devui: DevUI;
  try {
    devui = await start();
  } catch (error) {
    await emulator.stop();
    await rm(threadsDir, { recursive: true, force: true });
    throw error;
  }
  const fixture: DevUIFixture = {
    emulator,
    devui,
    threadsDir: path.join(threadsDir, 'index'),
    fetch: (route, init = {}) => fetch(fixture.devui.url + route, { ...init, headers: { authorization: `Bearer ${fixture.devui.token}`, ...init.headers } }),
    async restart() {
      await fixture.devui.close();
      fixture.devui = await start();
      return fixture.devui;
    },
    async close() {
      await fixture.devui.close();
      await emulator.stop();
      await rm(threadsDir, { recursive: true, force: true });
    },
  };
  return fixture;
}

/** A user's config with the SQLite store: `assistant` (Chat Completions) keeps its history in a database file. */
async function writeSqliteConfig(dir: string): Promise<string> {
  const file = path.join(dir, 'skein.yaml');
  await writeFile(
    file,
    [
      'plugins:',
      '  openai: { apiKey: test, baseURL: "${OPENAI_BASE_URL}" }',
      `  sqlite: { path: ${JSON.stringify(path.join(dir, 'threads.db'))} }`,
      'agents:',
      '  assistant: { client: openai-chat, model: gpt-4.1-mini, messageStore: sqlite }',
      '  responses: { client: openai-responses, model: gpt-4.1-mini }',
      '',
    ].join('\n'),
  );
  return file;
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
  /** The event's `id:` line, when it has one. */
  id?: string;
}

/** Reads server-sent events from a response; `onEvent` sees each one as it arrives. */
export async function readSse(response: Response, onEvent?: (event: SseEvent) => void | Promise<void>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(block)?.[1];
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const parsed: SseEvent = { event, data: data ? (JSON.parse(data) as Record<string, unknown>) : {}, ...(id !== undefined ? { id } : {}) };
      events.push(parsed);
      await onEvent?.(parsed);
    }
  }
  return events;
}
