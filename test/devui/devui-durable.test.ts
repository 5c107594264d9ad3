import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DurableRunCancelledError, DurableRunner, tool } from 'skein';
import { dbosPlugin } from 'skein/dbos';
import { openaiPlugin } from 'skein/openai';
import { sqliteStorePlugin } from 'skein/store-sqlite';
import { Emulator } from 'skein/testing';
import { z } from 'zod';
import { DURABLE_STOPPED_MESSAGE } from '../../src/devui/durable-chat.js';
import { startDevUI, type DevUI } from '../../src/devui/index.js';
import { DATABASE_URL, NEEDS_POSTGRES, RUN_ID, dropSchema, postgresAvailable, withService } from '../dbos/dbos-support.js';
import { SCRIPTED_ANSWER, timesDone } from '../dbos/fixtures/server-process.js';
import { startServerProcess } from '../support/server-process.js';
import { readSse, type SseEvent } from './devui-fixture.js';

const SCHEMA = `dbos_${RUN_ID}_devui`;
const KILL_SCHEMA = `dbos_${RUN_ID}_devui_kill`;
const STOP_SCHEMA = `dbos_${RUN_ID}_devui_stop`;
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
    // A test that failed while a tool was held lets it go, so the engine can shut down.
    afterEach(() => release());
    after(async () => {
      await devui?.close();
      await emulator?.stop();
      await dropSchema(SCHEMA);
      await dropSchema(KILL_SCHEMA);
      await dropSchema(STOP_SCHEMA);
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

    const postJson = (route: string, body: object) => api(route, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const stop = async (runId: string) => {
      const response = await postJson(`/api/runs/${encodeURIComponent(runId)}/stop`, {});
      expect(response.status).to.equal(200);
      return (await response.json()) as { stopped: boolean };
    };
    const textsOf = async (threadId: string) => {
      const thread = (await (await api(`/api/threads/${threadId}`)).json()) as { messages: { role: string; contents: { kind: string; text?: string; name?: string }[] }[] };
      return thread.messages.flatMap((m) => m.contents.map((c) => `${m.role}: ${c.kind === 'text' ? c.text : c.kind === 'function-call' ? `call ${c.name}` : c.kind}`));
    };
    const TURN = ['user: call slow_report {}', 'assistant: call slow_report', 'tool: function-result', 'assistant: slow_report returned: report ready'];

    it('Stop mid-run cancels the durable run: {stopped: true}, the stream ends with `stopped`, the run is cancelled, the thread keeps its finished turn once and nothing of the stopped one; the next message works', async () => {
      gate = Promise.resolve();
      const first = await readSse(await postJson('/api/chat', { agent: 'helper', text: 'call slow_report {}' }));
      expect(first.at(-1)?.event).to.equal('done');
      const { threadId, runId: finishedRun } = first[0]!.data as { threadId: string; runId: string };
      expect(await textsOf(threadId)).to.deep.equal(TURN);
      // The second turn's tool is held: the run is in flight when Stop arrives.
      gate = new Promise<void>((resolve) => (release = resolve));
      const reportsHeld = reports;
      let runId = '';
      let answer: { stopped: boolean } | undefined;
      const events = await readSse(await postJson('/api/chat', { threadId, text: 'call slow_report {}' }), async (event) => {
        if (event.event === 'run') runId = event.data.runId as string;
        if (event.event === 'tool-call') answer = await stop(runId);
      });
      expect(answer).to.deep.equal({ stopped: true });
      // The stream ended while the tool was still held: the way an in-process stop ends it.
      expect(reportsHeld).to.equal(reports);
      expect(events.map((e) => e.event)).to.not.include('done');
      expect(events.at(-1)).to.deep.equal({ event: 'stopped', data: { message: DURABLE_STOPPED_MESSAGE } });
      const runner = devui.container.get<DurableRunner>(DurableRunner);
      expect(await runner.getRun(runId).then(() => undefined, (e: unknown) => e)).to.be.instanceOf(DurableRunCancelledError);
      release();
      // The thread as before the stopped turn; a reload of the run's stream ends the same way.
      expect(await textsOf(threadId)).to.deep.equal(TURN);
      expect((await readSse(await api(`/api/runs/${runId}/events`))).at(-1)?.event).to.equal('stopped');
      // Stopping again, a finished run, or an id no thread names: nothing to stop.
      expect(await stop(runId)).to.deep.equal({ stopped: false });
      expect(await stop(finishedRun)).to.deep.equal({ stopped: false });
      expect(await stop('no-such-run')).to.deep.equal({ stopped: false });
      // The next message on the thread runs (no 409 for the cancelled run) and lands once.
      gate = Promise.resolve();
      const next = await readSse(await postJson('/api/chat', { threadId, text: 'call slow_report {}' }));
      expect(next.at(-1)?.event).to.equal('done');
      expect(await textsOf(threadId)).to.deep.equal([...TURN, ...TURN]);
    });

    it('Stop in the first turn of a new durable thread: the run is cancelled and, as for a stopped first turn of any agent, no thread is listed', async () => {
      gate = new Promise<void>((resolve) => (release = resolve));
      let run: { runId: string; threadId: string } | undefined;
      let answer: { stopped: boolean } | undefined;
      const events = await readSse(await postJson('/api/chat', { agent: 'helper', text: 'call slow_report {}' }), async (event) => {
        if (event.event === 'run') run = event.data as typeof run;
        if (event.event === 'tool-call') answer = await stop(run!.runId);
      });
      expect(answer).to.deep.equal({ stopped: true });
      expect(events.at(-1)?.event).to.equal('stopped');
      release();
      expect((await api(`/api/threads/${run!.threadId}`)).status).to.equal(404);
      const listed = (await (await api('/api/threads')).json()) as { threads: { id: string }[] };
      expect(listed.threads.map((t) => t.id)).to.not.include(run!.threadId);
      expect(await stop(run!.runId)).to.deep.equal({ stopped: false });
    });

    it('Stop on a run that waits for approval: {stopped: true}; the thread keeps the asking turn with its call pending, and the answer starts a new run that runs the tool once', async () => {
      const asked = await readSse(await postJson('/api/chat', { agent: 'helper', text: 'call deploy {}' }));
      const { runId, threadId } = asked[0]!.data as { runId: string; threadId: string };
      const [call] = asked.at(-1)!.data.pendingApprovals as { callId: string }[];
      const before = deploys;
      expect(await stop(runId)).to.deep.equal({ stopped: true });
      const runner = devui.container.get<DurableRunner>(DurableRunner);
      expect(await runner.getRun(runId).then(() => undefined, (e: unknown) => e)).to.be.instanceOf(DurableRunCancelledError);
      const listed = (await (await api(`/api/threads/${threadId}`)).json()) as { pendingApprovals?: { callId: string }[] };
      expect(listed.pendingApprovals?.map((p) => p.callId)).to.deep.equal([call!.callId]);
      const rest = await readSse(await postJson('/api/chat', { threadId, approvals: [{ callId: call!.callId, approved: true }] }));
      expect(rest[0]!.data.runId).to.not.equal(runId);
      expect(rest.find((e) => e.event === 'tool-result')?.data).to.deep.include({ callId: call!.callId, result: 'deployed' });
      expect(rest.at(-1)?.event).to.equal('done');
      expect(deploys).to.equal(before + 1);
      const texts = await textsOf(threadId);
      expect(texts.filter((t) => t.startsWith('user: ') || t.startsWith('assistant: deploy'))).to.deep.equal(['user: call deploy {}', 'assistant: deploy returned: deployed']);
      expect(texts.filter((t) => t === 'tool: function-result')).to.have.length(1);
    });

    it('Stop reaching another Dev UI process on the same index and system database cancels the run; the page reading it from the first process gets `stopped`', async () => {
      const env = { DATABASE_URL, SCHEMA: STOP_SCHEMA, THREADS_DB: path.join(dir, 'stop-threads.db'), THREADS_DIR: path.join(dir, 'stop-index'), COUNT_FILE: path.join(dir, 'stop.count'), CHUNK_MS: '200', TOKEN };
      const headers = { authorization: `Bearer ${TOKEN}` };
      // Both launch before the run exists, so neither recovers what the other runs.
      const [reading, stopping] = await Promise.all([startServer(env), startServer(env)]);
      const database = new pg.Client({ connectionString: DATABASE_URL });
      await database.connect();
      try {
        const chat = (text: string, threadId?: string) => fetch(`${reading.url}/api/chat`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'reader', text, threadId }) });
        const done = await readSse(await chat('Read the pages'));
        expect(done.at(-1)?.event).to.equal('done');
        const threadId = done[0]!.data.threadId as string;
        let runId = '';
        let answer: { stopped: boolean } | undefined;
        // The answer streams 3 characters per 200 ms: Stop goes to the other process at its first piece.
        const events = await readSse(await chat('Read the pages again', threadId), async (event) => {
          if (event.event === 'run') runId = event.data.runId as string;
          if (event.event === 'delta' && answer === undefined) answer = (await (await fetch(`${stopping.url}/api/runs/${runId}/stop`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' })).json()) as { stopped: boolean };
        });
        expect(answer).to.deep.equal({ stopped: true });
        expect(events.at(-1)).to.deep.equal({ event: 'stopped', data: { message: DURABLE_STOPPED_MESSAGE } });
        expect(shownText(events).length).to.be.lessThan(ANSWER.length);
        const status = await database.query<{ status: string }>(`SELECT status FROM "${STOP_SCHEMA}".workflow_status WHERE workflow_uuid = $1`, [runId]);
        expect(status.rows.map((r) => r.status)).to.deep.equal(['CANCELLED']);
        // Either process shows the thread with the first turn only, once.
        for (const url of [reading.url, stopping.url]) {
          const thread = (await (await fetch(`${url}/api/threads/${threadId}`, { headers })).json()) as { messages: { role: string; contents: { kind: string; text?: string }[] }[] };
          const texts = thread.messages.flatMap((m) => m.contents.filter((c) => c.kind === 'text').map((c) => `${m.role}: ${c.text}`));
          expect(texts).to.deep.equal(['user: Read the pages', `assistant: ${ANSWER}`]);
        }
        expect((await (await fetch(`${reading.url}/api/runs/${runId}/stop`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' })).json()) as { stopped: boolean }).to.deep.equal({ stopped: false });
      } finally {
        await database.end();
        for (const server of [reading, stopping]) server.child.kill('SIGTERM');
        await Promise.all([reading.exit, stopping.exit]);
      }
    });

    it('run settings reach every model call of a durable run (kept with the run: after an approval wait too), and only that run', async () => {
      const sentToModel = () => emulator.requestsTo('/v1/chat/completions').map((r) => r.body as { temperature?: number; max_completion_tokens?: number; max_tokens?: number; messages: { role: string; content: unknown }[] });
      const before = sentToModel().length;
      const settings = { temperature: 0.4, maxOutputTokens: 60, instructions: 'Answer in French.' };
      const asked = await readSse(await postJson('/api/chat', { agent: 'helper', text: 'call deploy {}', settings }));
      expect(asked[0]!.data).to.deep.include({ durable: true, settings });
      const { threadId } = asked[0]!.data as { threadId: string };
      const pending = asked.at(-1)!.data.pendingApprovals as { callId: string }[];
      const rest = await readSse(await postJson('/api/chat', { threadId, approvals: [{ callId: pending[0]!.callId, approved: true }] }));
      expect(rest.at(-1)?.event).to.equal('done');
      const calls = sentToModel().slice(before);
      expect(calls).to.have.length(2);
      for (const call of calls) {
        expect(call.temperature).to.equal(0.4);
        expect(call.max_completion_tokens ?? call.max_tokens).to.equal(60);
        expect(JSON.stringify(call.messages.filter((m) => m.role === 'system' || m.role === 'developer'))).to.contain('Answer in French.');
      }
      // The next turn without settings has none.
      const next = await readSse(await postJson('/api/chat', { threadId, text: 'hello' }));
      expect(next.at(-1)?.event).to.equal('done');
      const last = sentToModel().at(-1)!;
      expect(last.temperature).to.equal(undefined);
      expect(JSON.stringify(last.messages)).to.not.contain('Answer in French.');
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
