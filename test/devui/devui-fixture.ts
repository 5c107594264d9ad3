import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Emulator } from 'skein/testing';
import { startDevUI, type DevUI } from '../../src/devui/index.js';

/** The sample config `npm run devui` uses (in the source tree; it loads its tools plugin from dist). */
export const SAMPLE_CONFIG = fileURLToPath(new URL('../../../samples/devui/skein.yaml', import.meta.url));

export interface DevUIFixture {
  emulator: Emulator;
  devui: DevUI;
  threadsDir: string;
  /** Closes the Dev UI and starts a new one on the same config, emulator and thread directory. */
  restart(): Promise<DevUI>;
  close(): Promise<void>;
}

/** The Dev UI on the sample config, its agents on a fresh emulator, threads in a fresh directory. */
export async function startFixture(): Promise<DevUIFixture> {
  const emulator = await Emulator.start();
  const threadsDir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-'));
  const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: emulator.openaiBaseURL };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_MODEL;
  const fixture: DevUIFixture = {
    emulator,
    devui: await startDevUI({ config: SAMPLE_CONFIG, port: 0, threadsDir, env }),
    threadsDir,
    async restart() {
      await fixture.devui.close();
      fixture.devui = await startDevUI({ config: SAMPLE_CONFIG, port: 0, threadsDir, env });
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

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
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
      const parsed: SseEvent = { event, data: data ? (JSON.parse(data) as Record<string, unknown>) : {} };
      events.push(parsed);
      await onEvent?.(parsed);
    }
  }
  return events;
}
