import type { BaseEvent } from '@ag-ui/core';
import { expect } from 'chai';
import { join } from 'node:path';
import { ChatAgent, ConfigurationError, tool } from 'skein';
import { AgUiServer, InMemoryAgUiThreadStore } from 'skein/ag-ui';
import { DbosDurableRunner, durableAgent } from 'skein/dbos';
import { OpenAIChatClient } from 'skein/openai';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { Emulator } from 'skein/testing';
import { z } from 'zod';
import { DATABASE_URL, NEEDS_POSTGRES, RUN_ID, dropSchema, postgresAvailable, withService } from '../dbos/dbos-support.js';
import { SCRIPTED_ANSWER, timesDone } from '../dbos/fixtures/server-process.js';
import { startServerProcess } from '../support/server-process.js';
import { tempDir } from '../stores/services.js';
import { HttpAgent, addTodoTool, lastText, postRaw, runVerified, say, types, writeDocumentTool } from './ag-ui-fixture.js';

const SCHEMA = `dbos_${RUN_ID}_agui`;
const KILL_SCHEMA = `dbos_${RUN_ID}_agui_kill`;
const SERVER = join(import.meta.dirname, 'fixtures', 'durable-ag-ui-server.js');
const ANSWER = SCRIPTED_ANSWER;
const startServer = (env: Record<string, string>) => startServerProcess(SERVER, env);

withService('skein/ag-ui: a durable agent served by AgUiServer (DBOS on PostgreSQL)', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('durable runs over AG-UI', function () {
    this.timeout(60_000);
    const dir = tempDir();
    const deleted: string[] = [];
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    let emulator: Emulator;
    let runner: DbosDurableRunner;
    let server: AgUiServer;
    let url: string;
    let agent: ChatAgent;
    let durable: ReturnType<typeof durableAgent>;
    let writerUrl: string;
    let archived = 0;
    const written: string[] = [];
    const DOCUMENT = 'Once upon a time there was a dog named "Rex", who ran fast.';
    const threads = new InMemoryAgUiThreadStore();
    const errors: string[] = [];

    before(async () => {
      emulator = await Emulator.start();
      agent = new ChatAgent({
        name: 'durable-helper',
        chatClient: new OpenAIChatClient({ apiKey: 'x', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
        chatMessageStoreFactory: new SqliteChatMessageStoreFactory({ path: join(dir.path, 'threads.db') }),
        tools: [
          tool({ name: 'delete_file', description: 'Deletes a file', parameters: z.object({ path: z.string() }), requiresApproval: true, execute: ({ path }) => (deleted.push(path), `deleted ${path}`) }),
          tool({ name: 'slow_report', description: 'Writes a report slowly', parameters: z.object({}), execute: async () => (await gate, 'report ready') }),
          tool({ name: 'archive_report', description: 'Archives the report slowly', parameters: z.object({}), requiresApproval: true, execute: async () => (await gate, archived++, 'archived') }),
        ],
      });
      // A second durable agent, served with predictive state (its name is its own in the test tree: one DBOS registry per process).
      const writer = new ChatAgent({
        name: 'agui-durable-writer',
        chatClient: new OpenAIChatClient({ apiKey: 'x', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
        chatMessageStoreFactory: new SqliteChatMessageStoreFactory({ path: join(dir.path, 'threads.db') }),
        tools: [
          writeDocumentTool(written),
          addTodoTool(),
          tool({ name: 'publish', description: 'Publishes a text', parameters: z.object({ text: z.string() }), requiresApproval: true, execute: ({ text }) => `published ${text}` }),
        ],
      });
      runner = new DbosDurableRunner({ systemDatabaseUrl: DATABASE_URL, schema: SCHEMA, pollingIntervalMs: 50 });
      durable = durableAgent(agent, { runner });
      const durableWriter = durableAgent(writer, { runner });
      await runner.launch();
      server = new AgUiServer({
        agents: {
          helper: { agent, durable: { agent: durable, runner } },
          writer: {
            agent: writer,
            durable: { agent: durableWriter, runner },
            predictState: [
              { stateKey: 'document', tool: 'write_document', toolArgument: 'document' },
              { stateKey: 'published', tool: 'publish', toolArgument: 'text' },
            ],
          },
        },
        threads,
        logger: { warn: () => undefined, error: (message) => errors.push(message) },
      });
      const base = await server.listen();
      url = `${base}/agents/helper`;
      writerUrl = `${base}/agents/writer`;
    });
    after(async () => {
      await server.close();
      await runner.shutdown();
      await emulator.stop();
      await dropSchema(SCHEMA);
      await dropSchema(KILL_SCHEMA);
      dir.remove();
    });

    it('each AG-UI run is a durable run with the client\'s runId; the thread goes on across runs', async () => {
      const page = new HttpAgent({ url });
      const first = await say(page, 'My name is Ada.');
      expect(lastText(page)).to.equal('Nice to meet you, Ada!');
      const runId = (first.events[0] as BaseEvent & { runId: string }).runId;
      // The engine has the run under the client's runId, finished, with the reply.
      expect((await runner.getRun(runId)).text).to.equal('Nice to meet you, Ada!');
      await say(page, 'What is my name?');
      expect(lastText(page)).to.equal('Your name is Ada.');
      const reload = new HttpAgent({ url, threadId: page.threadId });
      await runVerified(reload);
      expect(reload.messages.map((m) => m.content)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!', 'What is my name?', 'Your name is Ada.']);
    });

    it("the client's context and the forwardedProps hook's model options reach the durable run's model calls, for that run only", async () => {
      const hooked = new AgUiServer({
        agents: { helper: { agent, durable: { agent: durable, runner } } },
        threads,
        logger: { warn: () => undefined, error: () => undefined },
        forwardedProps: (props) => ((props as { temperature?: unknown } | undefined)?.temperature === 0.3 ? { chatOptions: { temperature: 0.3 }, additionalInstructions: 'Answer briefly.' } : undefined),
      });
      const hookedUrl = `${await hooked.listen()}/agents/helper`;
      try {
        const page = new HttpAgent({ url: hookedUrl });
        const at = emulator.requests.length;
        await say(page, 'My name is Ada.', { context: [{ description: "The user's timezone", value: 'Europe/Paris' }], forwardedProps: { temperature: 0.3 } });
        expect(lastText(page)).to.equal('Nice to meet you, Ada!');
        const sent = emulator.requests.slice(at).filter((r) => r.method === 'POST').map((r) => r.body as { temperature?: number });
        expect(sent).to.have.length(1);
        expect(sent[0]!.temperature).to.equal(0.3);
        expect(JSON.stringify(sent[0])).to.contain('Answer briefly.').and.to.contain('Europe/Paris');
        // The next run sends neither: the thread never stored them.
        const next = emulator.requests.length;
        await say(page, 'What is my name?');
        expect(lastText(page)).to.equal('Your name is Ada.');
        const later = emulator.requests.slice(next).filter((r) => r.method === 'POST').map((r) => r.body as { temperature?: number });
        expect(later[0]!.temperature).to.equal(undefined);
        expect(JSON.stringify(later[0])).to.not.contain('Answer briefly.').and.to.not.contain('Europe/Paris');
      } finally {
        await hooked.close();
      }
    });

    it('an approval ends the AG-UI run as an interrupt while the durable run waits; resume approves it and streams the rest; the tool runs once', async () => {
      const page = new HttpAgent({ url });
      const first = await say(page, 'call delete_file {"path":"/tmp/durable.txt"}');
      const finished = first.events.at(-1) as { outcome?: { type: string; interrupts?: { id: string }[] } };
      expect(finished.outcome?.type).to.equal('interrupt');
      const runId = (first.events[0] as BaseEvent & { runId: string }).runId;
      expect((await runner.getWaiting(runId))?.approvalRequests.map((r) => r.name)).to.deep.equal(['delete_file']);
      expect(deleted).to.deep.equal([]);
      const interrupt = finished.outcome!.interrupts![0]!;
      const resumed = await runVerified(page, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
      expect(resumed.events.find((e) => e.type === 'TOOL_CALL_RESULT')).to.deep.include({ content: 'deleted /tmp/durable.txt' });
      expect(lastText(page)).to.equal('delete_file returned: deleted /tmp/durable.txt');
      expect(deleted).to.deep.equal(['/tmp/durable.txt']);
      expect((await runner.getRun(runId)).text).to.contain('delete_file returned: deleted /tmp/durable.txt');
    });

    it('a client that leaves while an approved call runs rejoins with the same runId and no new messages: it reads the rest once; the tool ran once', async () => {
      gate = new Promise<void>((resolve) => (release = resolve));
      const page = new HttpAgent({ url });
      const first = await say(page, 'call archive_report {}');
      const waitingRun = (first.events[0] as BaseEvent & { runId: string }).runId;
      const [interrupt] = page.pendingInterrupts;
      expect(interrupt?.toolCallId).to.be.a('string');
      const before = page.messages.map((m) => ({ ...m }));
      // The page approves, and the connection drops while the approved call runs.
      const controller = new AbortController();
      let runId = '';
      await page
        .runAgent({ abortController: controller, resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }] }, { onRunStartedEvent: ({ event }) => void ((runId = event.runId), controller.abort()) })
        .catch(() => undefined);
      expect(runId).to.not.equal('');
      // The durable run took the answer and goes on without the page.
      for (let i = 0; i < 200 && (await runner.getWaiting(waitingRun)); i++) await new Promise((r) => setTimeout(r, 25));
      expect(await runner.getWaiting(waitingRun)).to.equal(undefined);
      release();
      expect((await runner.getRun(waitingRun)).text).to.contain('archive_report returned: archived');
      // The page comes back with what it held and the id of the run it left.
      const back = new HttpAgent({ url, threadId: page.threadId, initialMessages: before });
      const { events } = await runVerified(back, { runId });
      expect((events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('success');
      const shape = (messages: typeof back.messages) => messages.map((m) => (m.role === 'assistant' ? (m.content ? `assistant: ${m.content}` : `calls: ${m.toolCalls?.map((c) => c.function.name).join()}`) : `${m.role}: ${m.content as string}`));
      const expected = ['user: call archive_report {}', 'calls: archive_report', 'tool: archived', 'assistant: archive_report returned: archived'];
      expect(shape(back.messages)).to.deep.equal(expected);
      expect(new Set(back.messages.map((m) => m.id)).size).to.equal(back.messages.length);
      expect(archived).to.equal(1);
      const reload = new HttpAgent({ url, threadId: page.threadId });
      const read = await runVerified(reload);
      expect((read.events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('success');
      expect(shape(reload.messages)).to.deep.equal(expected);
    });

    it('another tab that opens the thread while an approved call runs is not asked again: it reads the run on; the tool ran once', async () => {
      gate = new Promise<void>((resolve) => (release = resolve));
      const page = new HttpAgent({ url });
      await say(page, 'call archive_report {}');
      const [interrupt] = page.pendingInterrupts;
      const count = archived;
      const controller = new AbortController();
      await page
        .runAgent({ abortController: controller, resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }] }, { onRunStartedEvent: () => controller.abort() })
        .catch(() => undefined);
      // The tab opens the thread (threadId only) while the call waits on the gate; the gate opens while it reads.
      const tab = new HttpAgent({ url, threadId: page.threadId });
      const opened = runVerified(tab);
      release();
      const { events } = await opened;
      expect((events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('success');
      expect(tab.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      expect(lastText(tab)).to.equal('archive_report returned: archived');
      expect(archived).to.equal(count + 1);
      // The thread holds the finished turn: a reload reads it, with nothing waiting.
      const reload = new HttpAgent({ url, threadId: page.threadId });
      const read = await runVerified(reload);
      expect(types(read.events)).to.deep.equal(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
      expect((read.events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('success');
      expect(reload.messages.map((m) => m.id)).to.deep.equal(tab.messages.map((m) => m.id));
    });

    it('a declined interrupt on a durable run: the call never runs, the run ends with its refusal', async () => {
      const page = new HttpAgent({ url });
      await say(page, 'call delete_file {"path":"/etc/passwd"}');
      const [interrupt] = page.pendingInterrupts;
      const resumed = await runVerified(page, { resume: [{ interruptId: interrupt!.id, status: 'cancelled' }] });
      expect((resumed.events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('success');
      expect(deleted).to.not.include('/etc/passwd');
      expect(page.messages.find((m) => m.role === 'tool')).to.deep.include({ content: 'not run: the user rejected this call.' });
      const reload = new HttpAgent({ url, threadId: page.threadId });
      const read = await runVerified(reload);
      expect((read.events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('success');
      expect(reload.messages.map((m) => m.id)).to.deep.equal(page.messages.map((m) => m.id));
    });

    it('an edited history on a durable agent forks the thread; a client connecting by threadId gets the branch as one MESSAGES_SNAPSHOT', async () => {
      const page = new HttpAgent({ url });
      await say(page, 'My name is Ada.');
      await say(page, 'My name is Bob.');
      page.setMessages(page.messages.slice(0, 2));
      await say(page, 'What is my name?');
      expect(lastText(page)).to.equal('Your name is Ada.');
      expect((await threads.load(page.threadId))?.branches).to.have.length(1);
      const reload = new HttpAgent({ url, threadId: page.threadId });
      const { events } = await runVerified(reload);
      expect(types(events)).to.deep.equal(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
      expect(reload.messages.map((m) => [m.id, m.content])).to.deep.equal(page.messages.map((m) => [m.id, m.content]));
    });

    it('a durable run that fails ends with RUN_ERROR (a safe message with an error id in the log); the next run on the thread works', async () => {
      const page = new HttpAgent({ url });
      await say(page, 'My name is Ada.');
      emulator.injectFault({ kind: 'status', status: 500, message: 'secret internal detail' });
      let failed: BaseEvent[];
      try {
        failed = (await say(page, 'What is my name?')).events;
      } finally {
        emulator.clearFaults();
      }
      expect(types(failed)).to.deep.equal(['RUN_STARTED', 'RUN_ERROR']);
      const message = (failed[1] as BaseEvent & { message: string }).message;
      expect(message).to.match(/^The agent could not complete this run \(error id [0-9a-f-]{36}\)\.$/);
      expect(message).to.not.contain('secret');
      const id = /error id ([0-9a-f-]{36})/.exec(message)![1]!;
      expect(errors.some((m) => m.includes(id))).to.equal(true);
      // A reload reads the thread as the failed run left it (the run is over: nothing to read on).
      const opened = new HttpAgent({ url, threadId: page.threadId });
      const read = await runVerified(opened);
      expect(types(read.events).at(-1)).to.equal('RUN_FINISHED');
      expect(opened.messages.map((m) => m.content)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!']);
      // The page sends its next message (the failed one is still in its list): the thread goes on.
      const next = await say(page, 'What is my name?');
      expect(types(next.events).at(-1)).to.equal('RUN_FINISHED');
      expect(lastText(page)).to.equal('Your name is Ada.');
      const reload = new HttpAgent({ url, threadId: page.threadId });
      await runVerified(reload);
      expect(reload.messages.at(-1)?.content).to.equal('Your name is Ada.');
    });

    it('predictive state on a durable agent: PredictState, then STATE_DELTA while the argument streams; the final state is stored with the thread', async () => {
      const page = new HttpAgent({ url: writerUrl, initialState: { theme: 'dark' } });
      const { events } = await say(page, `call write_document ${JSON.stringify({ document: DOCUMENT })}`);
      const t = types(events);
      expect(events.find((e) => e.type === 'CUSTOM')).to.deep.include({ name: 'PredictState' });
      expect(t.indexOf('CUSTOM')).to.be.lessThan(t.indexOf('TOOL_CALL_START'));
      const start = t.indexOf('TOOL_CALL_START');
      const end = t.indexOf('TOOL_CALL_END');
      // The durable stream joins deltas written close together (docs/durable.md), so how many come is the engine's business: each is a longer prefix.
      const during = events.filter((e, i) => e.type === 'STATE_DELTA' && i > start && i < end).map((e) => (e as BaseEvent & { delta: { op: string; path: string; value?: unknown }[] }).delta);
      expect(during.length, 'deltas while the arguments stream').to.be.greaterThan(0);
      let previous = '';
      for (const [op] of during) {
        expect(op).to.deep.include({ op: previous === '' ? 'add' : 'replace', path: '/document' });
        expect(DOCUMENT.startsWith(op!.value as string) && (op!.value as string).length > previous.length, JSON.stringify(op!.value)).to.equal(true);
        previous = op!.value as string;
      }
      expect(previous).to.equal(DOCUMENT);
      expect(written.at(-1)).to.equal(DOCUMENT);
      expect(page.state).to.deep.equal({ theme: 'dark', document: DOCUMENT });
      // A tool of the durable run that writes the state: its change reaches the page and the thread too.
      await say(page, 'call add_todo {"item":"Bread"}');
      expect(page.state).to.deep.equal({ theme: 'dark', document: DOCUMENT, todos: ['Bread'] });
      const reload = new HttpAgent({ url: writerUrl, threadId: page.threadId });
      await runVerified(reload);
      expect(reload.state).to.deep.equal({ theme: 'dark', document: DOCUMENT, todos: ['Bread'] });
    });

    it('predictive state on a durable agent, a watched call waiting for approval: taken back while it waits; approved, the state holds it; declined, it never does', async () => {
      const page = new HttpAgent({ url: writerUrl });
      const first = await say(page, 'call publish {"text":"hello world"}');
      expect((first.events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('interrupt');
      const deltas = first.events.filter((e) => e.type === 'STATE_DELTA').map((e) => (e as BaseEvent & { delta: unknown[] }).delta);
      expect(deltas.at(-1)).to.deep.equal([{ op: 'remove', path: '/published' }]);
      expect(page.state).to.deep.equal({});
      await runVerified(page, { resume: [{ interruptId: page.pendingInterrupts[0]!.id, status: 'resolved', payload: { approved: true } }] });
      expect(lastText(page)).to.equal('publish returned: published hello world');
      expect(page.state).to.deep.equal({ published: 'hello world' });
      const reload = new HttpAgent({ url: writerUrl, threadId: page.threadId });
      await runVerified(reload);
      expect(reload.state).to.deep.equal({ published: 'hello world' });

      const declined = new HttpAgent({ url: writerUrl });
      await say(declined, 'call publish {"text":"secret"}');
      await runVerified(declined, { resume: [{ interruptId: declined.pendingInterrupts[0]!.id, status: 'cancelled' }] });
      expect(declined.state).to.deep.equal({});
      const reloadDeclined = new HttpAgent({ url: writerUrl, threadId: declined.threadId });
      await runVerified(reloadDeclined);
      expect(reloadDeclined.state).to.deep.equal({});
    });

    it('a client that leaves mid-run does not stop it; sending the same runId with no new messages reads the rest', async () => {
      gate = new Promise<void>((resolve) => (release = resolve));
      const page = new HttpAgent({ url });
      await say(page, 'My name is Bob.');
      const before = page.messages.map((m) => ({ ...m }));
      page.addMessage({ id: 'u-slow', role: 'user', content: 'call slow_report {}' });
      const controller = new AbortController();
      let runId = '';
      await page
        .runAgent({ abortController: controller }, { onRunStartedEvent: ({ event }) => void (runId = event.runId), onToolCallEndEvent: () => controller.abort() })
        .catch(() => undefined);
      expect(runId).to.not.equal('');
      // The run goes on without the client: the tool finishes once it is let through.
      release();
      expect((await runner.getRun(runId)).text).to.equal('slow_report returned: report ready');
      // The page comes back with the history it had before the run and the run's id: it gets the whole run.
      const back = new HttpAgent({ url, threadId: page.threadId, initialMessages: [...before, { id: 'u-slow', role: 'user', content: 'call slow_report {}' }] });
      const { events } = await runVerified(back, { runId });
      expect(types(events)).to.include.members(['TOOL_CALL_START', 'TOOL_CALL_RESULT', 'TEXT_MESSAGE_START']);
      expect(lastText(back)).to.equal('slow_report returned: report ready');
      // Its thread holds the turn once, and nothing was forked for the rejoin.
      expect((await threads.load(page.threadId))?.branches).to.equal(undefined);
      const reload = new HttpAgent({ url, threadId: page.threadId });
      await runVerified(reload);
      expect(reload.messages.filter((m) => m.role === 'user').map((m) => m.content)).to.deep.equal(['My name is Bob.', 'call slow_report {}']);
    });

    it('the serving process is SIGKILLed while the answer streams: the client rejoins the recovering process and ends with each message once; tools once, the turn once', async () => {
      const countFile = join(dir.path, 'kill.count');
      const env = { DATABASE_URL, SCHEMA: KILL_SCHEMA, THREADS_DB: join(dir.path, 'kill-threads.db'), COUNT_FILE: countFile, CHUNK_MS: '60' };
      // The answer (third model call) streams 3 characters per 60 ms; the process dies before its piece 8.
      const first = await startServer({ ...env, KILL_AT: '3:8' });
      const page = new HttpAgent({ url: first.url });
      page.addMessage({ id: 'u-pages', role: 'user', content: 'Read the pages' });
      let runId = '';
      let seen = '';
      const cut = await page
        .runAgent({}, { onRunStartedEvent: ({ event }) => void (runId = event.runId), onTextMessageContentEvent: ({ event }) => void (seen += event.delta) })
        .then(() => undefined, (error: unknown) => error);
      expect(await first.exit).to.equal('SIGKILL');
      expect(cut, 'the cut request fails on the client').to.be.instanceOf(Error);
      // The page showed part of the answer, and no more than part.
      expect(seen.length).to.be.greaterThan(0);
      expect(ANSWER.startsWith(seen) && seen.length < ANSWER.length, seen).to.equal(true);
      const second = await startServer(env);
      try {
        // The page comes back to the recovering process with everything it holds (the partial answer too) and the run's id.
        const back = new HttpAgent({ url: second.url, threadId: page.threadId, initialMessages: page.messages });
        const { events } = await runVerified(back, { runId });
        // The rejoin streamed the cut attempt and then the re-made one: two answer messages started, one kept.
        const answers = events.filter((e) => e.type === 'TEXT_MESSAGE_START').length;
        expect(answers).to.equal(2);
        expect(types(events)).to.include('MESSAGES_SNAPSHOT');
        const shape = (messages: typeof back.messages) => messages.map((m) => (m.role === 'assistant' ? (m.content ? `assistant: ${m.content}` : `calls: ${m.toolCalls?.map((c) => c.function.name).join()}`) : `${m.role}: ${m.content as string}`));
        const expected = ['user: Read the pages', 'calls: fetch_page', 'tool: fetch_page 1 ok', 'calls: summarize', 'tool: summarize 2 ok', `assistant: ${ANSWER}`];
        expect(shape(back.messages)).to.deep.equal(expected);
        expect(new Set(back.messages.map((m) => m.id)).size).to.equal(back.messages.length);
        // The thread has the turn once; each tool ran once over both processes.
        const reload = new HttpAgent({ url: second.url, threadId: page.threadId });
        await runVerified(reload);
        expect(shape(reload.messages)).to.deep.equal(expected);
        expect([timesDone(countFile, 'fetch_page'), timesDone(countFile, 'summarize')]).to.deep.equal([1, 1]);
      } finally {
        second.child.kill('SIGTERM');
        await second.exit;
      }
    });

    it('a durable agent takes no frontend tools: 400 before anything runs; another agent as its durable face is a ConfigurationError', async () => {
      const refused = await postRaw(url, { threadId: 'durable-tools', runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'hi' }], tools: [{ name: 'change_background', description: 'x', parameters: {} }], context: [], state: {}, forwardedProps: {} });
      expect(refused.status).to.equal(400);
      expect(JSON.parse(refused.text).error).to.equal('Agent "helper" runs durably, and a durable run takes no per-run tools: send "tools": [] (found change_background), or serve the agent without durability for frontend tools.');
      expect(await threads.load('durable-tools')).to.equal(undefined);
      const other = new ChatAgent({ name: 'other', chatClient: new OpenAIChatClient({ apiKey: 'x', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }) });
      expect(() => new AgUiServer({ agents: { helper: { agent: other, durable: { agent: durable, runner } } } })).to.throw(ConfigurationError, 'Agent "helper" is served with a durable agent of another agent ("durable-helper")');
    });
  }),
);
