import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { tool } from 'skein';
import { dbosPlugin } from 'skein/dbos';
import { openaiPlugin } from 'skein/openai';
import { sqliteStorePlugin } from 'skein/store-sqlite';
import { Emulator } from 'skein/testing';
import { z } from 'zod';
import { startDevUI, type DevUI } from '../../src/devui/index.js';
import { DATABASE_URL, NEEDS_POSTGRES, RUN_ID, dropSchema, postgresAvailable, withService } from '../dbos/dbos-support.js';
import { readSse, type SseEvent } from './devui-fixture.js';

const SCHEMA = `dbos_${RUN_ID}_devui`;

withService('Dev UI: a durable agent (DBOS on PostgreSQL)', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('Dev UI chat with a durable agent', function () {
    this.timeout(60_000);
    let emulator: Emulator;
    let devui: DevUI;
    let dir: string;
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    let reports = 0;
    const api = (route: string, init: RequestInit = {}) => fetch(devui.url + route, { ...init, headers: { authorization: `Bearer ${devui.token}`, ...init.headers } });

    before(async () => {
      emulator = await Emulator.start();
      dir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-durable-'));
      devui = await startDevUI({
        port: 0,
        threadsDir: path.join(dir, 'index'),
        warn: () => undefined,
        config: {
          plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 }), sqliteStorePlugin({ path: path.join(dir, 'threads.db') }), dbosPlugin({ systemDatabaseUrl: DATABASE_URL, schema: SCHEMA, pollingIntervalMs: 50 })],
          tools: [tool({ name: 'slow_report', description: 'Writes a report slowly', parameters: z.object({}), execute: async () => (await gate, reports++, 'report ready') })],
          agents: { helper: { client: 'openai-chat', model: 'gpt-4.1-mini', messageStore: 'sqlite', tools: ['slow_report'], durability: { engine: 'dbos' } } },
        },
      });
    });
    after(async () => {
      await devui?.close();
      await emulator?.stop();
      await dropSchema(SCHEMA);
      await rm(dir, { recursive: true, force: true });
    });

    it('a page that loses the stream mid-run reconnects with Last-Event-ID and reads the rest; the thread is saved with the turn once', async () => {
      gate = new Promise<void>((resolve) => (release = resolve));
      const controller = new AbortController();
      const seen: SseEvent[] = [];
      const first = await api('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'helper', text: 'call slow_report {}' }), signal: controller.signal });
      expect(first.status).to.equal(200);
      await readSse(first, (event) => {
        seen.push(event);
        if (event.event === 'tool-call') controller.abort();
      }).catch(() => undefined);
      const run = seen[0]!;
      expect(run.event).to.equal('run');
      expect(run.data).to.deep.include({ agent: 'helper', durable: true });
      const runId = run.data.runId as string;
      const threadId = run.data.threadId as string;
      const last = [...seen].reverse().find((e) => e.id !== undefined)!.id!;
      expect(seen.map((e) => e.event)).to.include('tool-call');
      // The page left; the run did not: the tool finishes once it is let through.
      release();
      const rest = await readSse(await api(`/api/runs/${runId}/events`, { headers: { 'last-event-id': last } }));
      expect(rest[0]).to.deep.include({ event: 'run' });
      const ids = rest.filter((e) => e.id !== undefined).map((e) => Number(e.id));
      expect(ids.length).to.be.greaterThan(0);
      expect(Math.min(...ids)).to.be.greaterThan(Number(last));
      expect(rest.find((e) => e.event === 'tool-result')?.data).to.deep.include({ result: 'report ready' });
      expect(rest.filter((e) => e.event === 'delta').map((e) => e.data.text).join('')).to.equal('slow_report returned: report ready');
      expect(rest.at(-1)?.event).to.equal('done');
      expect(reports).to.equal(1);
      // The thread is in the index with the turn once.
      const thread = (await (await api(`/api/threads/${threadId}`)).json()) as { messages: { role: string; contents: { kind: string; text?: string }[] }[] };
      const texts = thread.messages.flatMap((m) => m.contents.filter((c) => c.kind === 'text').map((c) => `${m.role}: ${c.text}`));
      expect(texts).to.deep.equal(['user: call slow_report {}', 'assistant: slow_report returned: report ready']);
      expect(thread.messages.filter((m) => m.contents.some((c) => c.kind === 'function-result'))).to.have.length(1);
      // Read again from its start (another tab), the run gives each message once, and the thread stays as saved.
      const whole = await readSse(await api(`/api/runs/${runId}/events`));
      expect(whole.filter((e) => e.event === 'tool-call').map((e) => e.data.name)).to.deep.equal(['slow_report']);
      expect(whole.filter((e) => e.event === 'delta').map((e) => e.data.text).join('')).to.equal('slow_report returned: report ready');
      expect(whole.at(-1)?.event).to.equal('done');
      const reloaded = (await (await api(`/api/threads/${threadId}`)).json()) as { messages: unknown[] };
      expect(reloaded.messages).to.have.length(thread.messages.length);
    });

    it('a Last-Event-ID that is no offset is a 400 saying what it expected; an unknown run a 404', async () => {
      const bad = await api('/api/runs/some-run/events', { headers: { 'last-event-id': 'abc' } });
      expect(bad.status).to.equal(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).to.equal('"Last-Event-ID" (or "after") must be an event id the stream sent (an offset, an integer >= 0); found "abc".');
      const unknown = await api('/api/runs/no-such-run/events');
      expect(unknown.status).to.equal(404);
      expect(((await unknown.json()) as { error: { message: string } }).error.message).to.equal('No thread of this Dev UI has "no-such-run" as its last durable run; reload the thread to see what it holds.');
    });
  }),
);
