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
import { SCRIPTED_ANSWER, timesDone } from '../dbos/fixtures/server-process.js';
import { startServerProcess } from '../support/server-process.js';
import { readSse, type SseEvent } from './devui-fixture.js';

const SCHEMA = `dbos_${RUN_ID}_devui`;
const KILL_SCHEMA = `dbos_${RUN_ID}_devui_kill`;
const SERVER = path.join(import.meta.dirname, 'fixtures', 'durable-devui.js');
const ANSWER = SCRIPTED_ANSWER;
const TOKEN = 'durable-devui-test-token';
const startServer = (env: Record<string, string>) => startServerProcess(SERVER, env);

/** The text a page shows from chat events, applying `retract` (drop what was shown of that model call). */
function shownText(events: readonly SseEvent[]): string {
  const byCall = new Map<string, string>();
  for (const e of events) {
    const call = String(e.data.modelCall ?? '');
    if (e.event === 'retract') byCall.delete(call);
    if (e.event === 'delta') byCall.set(call, (byCall.get(call) ?? '') + String(e.data.text));
  }
  return [...byCall.values()].join('');
}

withService('Dev UI: a durable agent (DBOS on PostgreSQL)', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('Dev UI chat with a durable agent', function () {
    this.timeout(60_000);
    let emulator: Emulator;
    let devui: DevUI;
    let dir: string;
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    let reports = 0;
    let deploys = 0;
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
          tools: [
            tool({ name: 'slow_report', description: 'Writes a report slowly', parameters: z.object({}), execute: async () => (await gate, reports++, 'report ready') }),
            tool({ name: 'deploy', description: 'Deploys the site', parameters: z.object({}), requiresApproval: true, execute: () => (deploys++, 'deployed') }),
          ],
          agents: { helper: { client: 'openai-chat', model: 'gpt-4.1-mini', messageStore: 'sqlite', tools: ['slow_report', 'deploy'], durability: { engine: 'dbos' } } },
        },
      });
    });
    after(async () => {
      await devui?.close();
      await emulator?.stop();
      await dropSchema(SCHEMA);
      await dropSchema(KILL_SCHEMA);
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

    it('the Dev UI process is SIGKILLed while the answer streams: the page reconnects to the process that recovered the run, drops the cut attempt on `retract` and shows the answer once; tools once; the turn saved once', async () => {
      const countFile = path.join(dir, 'kill.count');
      const env = { DATABASE_URL, SCHEMA: KILL_SCHEMA, THREADS_DB: path.join(dir, 'kill-threads.db'), THREADS_DIR: path.join(dir, 'kill-index'), COUNT_FILE: countFile, CHUNK_MS: '60', TOKEN };
      const headers = { authorization: `Bearer ${TOKEN}` };
      // The answer (third model call) streams 3 characters per 60 ms; the process dies before its piece 8.
      const first = await startServer({ ...env, KILL_AT: '3:8' });
      const seen: SseEvent[] = [];
      const chat = await fetch(`${first.url}/api/chat`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'reader', text: 'Read the pages' }) });
      await readSse(chat, (event) => void seen.push(event)).catch(() => undefined);
      expect(await first.exit).to.equal('SIGKILL');
      const { runId, threadId } = seen[0]!.data as { runId: string; threadId: string };
      const partial = shownText(seen);
      expect(partial.length).to.be.greaterThan(0);
      expect(ANSWER.startsWith(partial) && partial.length < ANSWER.length, partial).to.equal(true);
      const last = [...seen].reverse().find((e) => e.id !== undefined)!.id!;
      const second = await startServer(env);
      try {
        const rest = await readSse(await fetch(`${second.url}/api/runs/${runId}/events`, { headers: { ...headers, 'last-event-id': last } }));
        // The stream holds the cut attempt (what the page saw, and what was written after it before the kill) and the re-made one.
        const raw = [...seen, ...rest].filter((e) => e.event === 'delta').map((e) => String(e.data.text)).join('');
        expect(raw.startsWith(partial) && raw.endsWith(ANSWER) && raw.length > ANSWER.length, raw).to.equal(true);
        // The page, told to retract, shows the answer once.
        expect(rest.map((e) => e.event)).to.include('retract');
        expect(shownText([...seen, ...rest])).to.equal(ANSWER);
        expect(rest.at(-1)?.event).to.equal('done');
        // The recovering process saved the turn into the thread index, once.
        const thread = (await (await fetch(`${second.url}/api/threads/${threadId}`, { headers })).json()) as { messages: { role: string; contents: { kind: string; text?: string }[] }[] };
        const texts = thread.messages.flatMap((m) => m.contents.filter((c) => c.kind === 'text').map((c) => `${m.role}: ${c.text}`));
        expect(texts).to.deep.equal(['user: Read the pages', `assistant: ${ANSWER}`]);
        expect(thread.messages.filter((m) => m.contents.some((c) => c.kind === 'function-result'))).to.have.length(2);
        expect([timesDone(countFile, 'fetch_page'), timesDone(countFile, 'summarize')]).to.deep.equal([1, 1]);
      } finally {
        second.child.kill('SIGTERM');
        await second.exit;
      }
    });

    it('an approval: the turn ends with the pending call while the run waits; the answer continues the run, the tool runs once, the thread has the turn', async () => {
      const post = (body: object) => api('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const asked = await readSse(await post({ agent: 'helper', text: 'call deploy {}' }));
      const { runId, threadId } = asked[0]!.data as { runId: string; threadId: string };
      const done = asked.at(-1)!;
      expect(done.event).to.equal('done');
      const pending = done.data.pendingApprovals as { callId: string; name: string }[];
      expect(pending.map((p) => p.name)).to.deep.equal(['deploy']);
      expect(deploys).to.equal(0);
      // The thread lists the waiting call; new text is refused until it is answered; a page reconnecting reads the wait.
      const listed = (await (await api(`/api/threads/${threadId}`)).json()) as { pendingApprovals?: { callId: string }[] };
      expect(listed.pendingApprovals?.map((p) => p.callId)).to.deep.equal([pending[0]!.callId]);
      const busy = await post({ threadId, text: 'hello?' });
      expect(busy.status).to.equal(409);
      expect(((await busy.json()) as { error: { message: string } }).error.message).to.equal(`A durable run (${runId}) waits for your approval: answer it first.`);
      const last = [...asked].reverse().find((e) => e.id !== undefined)!.id!;
      const again = await readSse(await api(`/api/runs/${runId}/events`, { headers: { 'last-event-id': last } }));
      expect(again.map((e) => e.event)).to.deep.equal(['run', 'done']);
      // Approved: the run goes on from its wait.
      const rest = await readSse(await post({ threadId, approvals: [{ callId: pending[0]!.callId, approved: true }] }));
      expect(rest.find((e) => e.event === 'tool-result')?.data).to.deep.include({ callId: pending[0]!.callId, result: 'deployed' });
      expect(rest.at(-1)?.event).to.equal('done');
      expect(rest.at(-1)?.data.pendingApprovals).to.deep.equal([]);
      expect(rest.filter((e) => e.event === 'delta').map((e) => e.data.text).join('')).to.equal('deploy returned: deployed');
      expect(deploys).to.equal(1);
      const thread = (await (await api(`/api/threads/${threadId}`)).json()) as { messages: { role: string; contents: { kind: string; text?: string }[] }[] };
      const texts = thread.messages.flatMap((m) => m.contents.filter((c) => c.kind === 'text').map((c) => `${m.role}: ${c.text}`));
      expect(texts).to.deep.equal(['user: call deploy {}', 'assistant: deploy returned: deployed']);
      expect(thread.messages.filter((m) => m.contents.some((c) => c.kind === 'function-result'))).to.have.length(1);
      // Answered again (a stale tab): the call waits no more.
      const stale = await post({ threadId, approvals: [{ callId: pending[0]!.callId, approved: true }] });
      expect(stale.status).to.equal(409);
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
