import { expect } from 'chai';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { Observable, lastValueFrom, toArray } from 'rxjs';
import {
  ChatAgent,
  type ChatOptions,
  ConfigurationError,
  type ChatMessage,
  type ChatResponseUpdate,
  DurableEngineUnavailableError,
  DurableRunCancelledError,
  DurableRunNotFoundError,
  DurableRunVersionError,
  type DurableRunWaiting,
  ServiceError,
  SkeinError,
  tool,
} from 'skein';
import { DbosDurableRunner, DURABLE_TURN_KEY, UNRECORDED_RESULT, durableAgent } from 'skein/dbos';
import { McpConnectionError, mcpServer } from 'skein/mcp';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { z } from 'zod';
import { tempDir } from '../stores/services.js';
import { DATABASE_URL, NEEDS_POSTGRES, RUN_ID, countLines, dropSchema, postgresAvailable, readJson, runWorker, withService } from './dbos-support.js';
import { ScriptedClient } from './fixtures/scripted-client.js';

const SCHEMA = `dbos_${RUN_ID}_runs`;
/** A port on 127.0.0.1 that was free a moment ago (nothing listens on it). */
const closedPort = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as AddressInfo;
    probe.close(() => resolve(port));
  });
});

withService('durable runs on DBOS', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('in one process', function () {
    this.timeout(60_000);
    const dir = tempDir();
    const executions: string[] = [];
    let gate: Promise<void> = Promise.resolve();
    const fetchPage = tool({ name: 'fetch_page', parameters: z.object({ step: z.number() }), execute: async ({ step }, ctx) => (executions.push(`fetch_page ${ctx.idempotencyKey}`), await gate, `page ${step}`) });
    const summarize = tool({ name: 'summarize', parameters: z.object({ step: z.number() }), execute: ({ step }, ctx) => (executions.push(`summarize ${ctx.idempotencyKey}`), `secret summary ${step}`) });
    const deploy = tool({ name: 'deploy', parameters: z.object({ step: z.number() }), requiresApproval: true, execute: () => (executions.push('deploy'), 'deployed') });
    const factory = new SqliteChatMessageStoreFactory({ path: join(dir.path, 'threads.db') });
    const seen: string[] = [];
    /** The chat options of each model call of the researcher. */
    const options: ChatOptions[] = [];
    const agent = new ChatAgent({
      name: 'researcher',
      chatClient: new ScriptedClient(),
      tools: [fetchPage, summarize, deploy],
      chatMessageStoreFactory: factory,
      middleware: { chatClient: [{ onChatRequest: (ctx, next) => (seen.push(`model ${ctx.messages.length}`), options.push(ctx.options), next()) }] },
    });
    const runner = new DbosDurableRunner({
      systemDatabaseUrl: DATABASE_URL,
      schema: SCHEMA,
      pollingIntervalMs: 50,
      queues: { perThread: { partitionConcurrency: 1 } },
    });
    const researcher = durableAgent(agent, { runner, unrecordedTools: ['summarize'] });
    // The same agent with the stream of whole replies (streamDeltas: false).
    const reporter = durableAgent(new ChatAgent({ name: 'reporter', chatClient: new ScriptedClient(), tools: [fetchPage, summarize], chatMessageStoreFactory: factory }), { runner, streamDeltas: false });
    // keepPartial: the first reply says something and calls fetch_page; the next model call fails.
    const flakyClient = new ScriptedClient();
    const flaky = new ChatAgent({
      name: 'flaky',
      keepPartial: true,
      tools: [fetchPage, summarize],
      chatMessageStoreFactory: factory,
      chatClient: {
        providerId: 'flaky',
        threadKind: 'message-store',
        // Streamed as one update per message of the (failing) getResponse below.
        getStreamingResponse(messages) {
          return new Observable<ChatResponseUpdate>((subscriber) => {
            this.getResponse(messages).then(
              (response) => {
                for (const m of response.messages) subscriber.next({ role: m.role, contents: m.contents });
                subscriber.complete();
              },
              (error: unknown) => subscriber.error(error),
            );
          });
        },
        getResponse: async (messages) => {
          if (messages.some((m) => m.role === 'tool')) throw new ServiceError('flaky', 'The model service failed (503).', { status: 503 });
          const response = await flakyClient.getResponse(messages);
          return { ...response, messages: response.messages.map((m) => ({ ...m, contents: [{ kind: 'text', text: 'Looking it up.' }, ...m.contents] })) };
        },
      },
    });
    const flakyDurable = durableAgent(flaky, { runner });
    // An MCP server nobody listens on: listing its tools fails the run with the plugin's own error.
    const mcpUser = new ChatAgent({ name: 'mcp-user', chatClient: new ScriptedClient(), tools: [mcpServer({ name: 'gone', url: `http://127.0.0.1:${closedPort}/mcp` })], chatMessageStoreFactory: factory });
    const mcpDurable = durableAgent(mcpUser, { runner });

    before(async () => {
      // Before the real launch: DBOS is one per process, and a launch that failed leaves it unlaunched.
      const down = new DbosDurableRunner({ systemDatabaseUrl: 'postgres://postgres@127.0.0.1:1/test', schema: SCHEMA });
      const error = await down.launch().then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(DurableEngineUnavailableError);
      expect((error as Error).message).to.match(/cannot be reached.*Check systemDatabaseUrl/s);
      await runner.launch();
    });

    after(async () => {
      await runner.shutdown();
      factory.close();
      await dropSchema(SCHEMA);
      dir.remove();
    });

    beforeEach(() => {
      executions.length = 0;
      seen.length = 0;
      options.length = 0;
      gate = Promise.resolve();
    });

    it('runs the turn with middleware as usual, gives each tool its call id as idempotency key, and getRun returns the result', async () => {
      const thread = agent.getNewThread();
      const runId = await researcher.start('research', { thread, runId: `plain-${RUN_ID}` });
      const result = await runner.getRun(runId);
      expect(result.text).to.equal('done ("page 1"; "secret summary 2")');
      expect(executions).to.deep.equal([`fetch_page ${runId}:call_fetch_page_0`, `summarize ${runId}:call_summarize_1`]);
      expect(seen).to.have.length(3);
      const stored = await agent.getMessages(await agent.deserializeThread(result.thread));
      expect(stored).to.have.length(6);
      expect(stored[0]!.additionalProperties?.[DURABLE_TURN_KEY]).to.equal(`${runId}#0`);
      // Starting again with the same id is the same run: nothing runs twice.
      expect(await researcher.start('research', { thread, runId })).to.equal(runId);
      expect((await runner.getRun(runId)).text).to.equal(result.text);
      expect(executions).to.have.length(2);
    });

    it('keeps the result of a tool that opted out out of the recorded output and the stream, but the thread has it', async () => {
      const result = await researcher.run('research', { thread: agent.getNewThread() });
      // Tool results only: the model's own answer quotes what it was told (see docs/durable.md).
      const recorded = JSON.stringify(result.messages.filter((m) => m.role === 'tool'));
      expect(recorded).not.to.include('secret summary');
      expect(recorded).to.include(UNRECORDED_RESULT);
      const streamed = await lastValueFrom(runner.runStream(result.runId).pipe(toArray()));
      expect(JSON.stringify(streamed.filter((u) => u.role === 'tool'))).not.to.include('secret summary');
      const stored = await agent.getMessages(await agent.deserializeThread(result.thread));
      expect(JSON.stringify(stored)).to.include('secret summary 2');
    });

    it('streams text deltas and tool-call updates of each model call, coalesced and marked with the call, and resumes after an offset without repeating', async () => {
      const result = await researcher.run('research', { thread: agent.getNewThread() });
      const all = await lastValueFrom(runner.runStream(result.runId).pipe(toArray()));
      expect(all.map((u) => u.offset)).to.deep.equal(all.map((_, i) => i));
      const calls = [...new Set(all.flatMap((u) => (u.modelCall ? [u.modelCall.id] : [])))];
      expect(calls).to.deep.equal(['0.0', '0.1', '0.2']);
      for (const id of calls) {
        const entries = all.filter((u) => u.modelCall?.id === id);
        // One attempt each (nothing was cut), its first entry marked; the pieces of one burst in few writes.
        expect(entries.map((u) => !!u.modelCall!.first)).to.deep.equal(entries.map((_, i) => i === 0));
        expect(new Set(entries.map((u) => u.modelCall!.attempt)).size).to.equal(1);
        expect(entries.length).to.be.at.most(2);
      }
      // The first call's tool-call arguments, streamed in two deltas, come joined in one update.
      const delta = all.find((u) => u.modelCall?.id === '0.0' && u.toolCallDelta)!.toolCallDelta!;
      expect(delta).to.deep.include({ callId: 'call_fetch_page_0', name: 'fetch_page', argumentsDelta: '{"step":1}' });
      expect(all.filter((u) => u.modelCall?.id === '0.2').map((u) => u.text).join('')).to.equal(result.text);
      // Tool results stay whole entries (the unrecorded one redacted); usage travels in the deltas.
      expect(all.filter((u) => u.role === 'tool').map((u) => u.contents[0]!.kind)).to.deep.equal(['function-result', 'function-result']);
      expect(all.filter((u) => !u.modelCall && u.role !== 'tool')).to.deep.equal([]);
      expect(result.usage?.totalTokens).to.equal(45);
      const rest = await lastValueFrom(runner.runStream(result.runId, { after: 2 }).pipe(toArray()));
      expect(rest).to.deep.equal(all.slice(3));
    });

    it('streamDeltas: false streams one update per reply and tool result, and resumes after an offset without repeating', async () => {
      const result = await reporter.run('research', { thread: reporter.agent.getNewThread() });
      const all = await lastValueFrom(runner.runStream(result.runId).pipe(toArray()));
      expect(all.map((u) => u.offset)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(all.map((u) => u.role)).to.deep.equal(['assistant', 'tool', 'assistant', 'tool', 'assistant']);
      expect(all.filter((u) => u.text === result.text)).to.have.length(1);
      const rest = await lastValueFrom(runner.runStream(result.runId, { after: 2 }).pipe(toArray()));
      expect(rest).to.deep.equal(all.slice(3));
    });

    it('keepPartial: a run whose model call fails keeps its partial turn once, appended as a step keyed by the run', async () => {
      const thread = flaky.getNewThread();
      const runId = await flakyDurable.start('research', { thread, runId: `partial-${RUN_ID}` });
      const error = await runner.getRun(runId).then(() => undefined, (e: unknown) => e as Error);
      expect(error?.message).to.equal('The model service failed (503).');
      const stored = await flaky.getMessages(await flaky.deserializeThread((await thread.serialize()) as never));
      expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool']);
      expect(stored[0]!.additionalProperties?.[DURABLE_TURN_KEY]).to.equal(`${runId}#0`);
      expect(stored[1]!.additionalProperties?.partial).to.equal(true);
      expect(executions).to.deep.equal([`fetch_page ${runId}:call_fetch_page_0`]);
    });

    it('a failed run rejects getRun with the same Skein error class and fields, read back from the system database', async () => {
      const thread = flaky.getNewThread();
      const runId = await flakyDurable.start('research', { thread, runId: `typed-error-${RUN_ID}` });
      const error = await runner.getRun(runId).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(ServiceError);
      expect(error).to.be.instanceOf(SkeinError);
      const serviceError = error as ServiceError;
      expect([serviceError.name, serviceError.message, serviceError.status, serviceError.provider]).to.deep.equal(['ServiceError', 'The model service failed (503).', 503, 'flaky']);
      // keepPartial's partial message travels with the error as a public field too.
      expect(serviceError.partial?.additionalProperties?.partial).to.equal(true);
    });

    it("a run failed by a plugin's own error (MCP server unreachable) rejects getRun with that class, registered by the plugin", async () => {
      const runId = await mcpDurable.start('research', { thread: mcpUser.getNewThread() });
      const error = await runner.getRun(runId).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(McpConnectionError);
      expect((error as McpConnectionError).message).to.contain(`MCP server "gone" (http://127.0.0.1:${closedPort}/mcp)`);
    });

    it('waits for approval with the pending call in the thread, then runs the tool once when approved', async () => {
      const runId = await researcher.start('please deploy', { thread: agent.getNewThread() });
      let waiting: DurableRunWaiting | undefined;
      while (!(waiting = await runner.getWaiting(runId))) await new Promise((r) => setTimeout(r, 50));
      expect(waiting.approvalRequests.map((r) => r.name)).to.deep.equal(['deploy']);
      const pending = await agent.deserializeThread(waiting.thread);
      expect(pending.state.pendingApprovals).to.have.length(1);
      expect(executions).to.deep.equal([]);
      await runner.approve(runId, waiting.approvalRequests[0]!.callId, true);
      await runner.approve(runId, waiting.approvalRequests[0]!.callId, true); // a retried request: one answer
      const result = await runner.getRun(runId);
      expect(result.text).to.equal('done ("deployed")');
      expect(executions).to.deep.equal(['deploy']);
      expect(await runner.getWaiting(runId)).to.equal(undefined);
    });

    it("a run's chatOptions and additionalInstructions reach every model call of the run, before and after an approval wait; bad ones are refused before it starts", async () => {
      const runId = await researcher.start('please deploy', { thread: agent.getNewThread(), chatOptions: { temperature: 0.25, maxOutputTokens: 77 }, additionalInstructions: 'Answer in French.' });
      let waiting: DurableRunWaiting | undefined;
      while (!(waiting = await runner.getWaiting(runId))) await new Promise((r) => setTimeout(r, 50));
      await runner.approve(runId, waiting.approvalRequests[0]!.callId, true);
      expect((await runner.getRun(runId)).text).to.equal('done ("deployed")');
      expect(options).to.have.length(2);
      for (const o of options) {
        expect(o).to.include({ temperature: 0.25, maxOutputTokens: 77 });
        expect(o.instructions).to.contain('Answer in French.');
      }
      // A run without them has neither.
      options.length = 0;
      expect((await researcher.run('hello', { thread: agent.getNewThread() })).text).to.be.a('string');
      expect(options[0]).to.not.have.property('temperature');
      expect(options[0]!.instructions ?? '').to.not.contain('Answer in French.');
      const signal = await researcher.start('hello', { chatOptions: { signal: new AbortController().signal } as never }).then(() => undefined, (e: unknown) => e);
      expect(signal).to.be.instanceOf(ConfigurationError);
      expect((signal as Error).message).to.contain('without "signal"');
    });

    it('a denied approval never runs the tool', async () => {
      const runId = await researcher.start('please deploy', { thread: agent.getNewThread() });
      let waiting: DurableRunWaiting | undefined;
      while (!(waiting = await runner.getWaiting(runId))) await new Promise((r) => setTimeout(r, 50));
      await runner.approve(runId, waiting.approvalRequests[0]!.callId, false);
      const result = await runner.getRun(runId);
      expect(executions).to.deep.equal([]);
      expect(result.text).to.match(/^done \(/);
      // A finished run: cancelRun changes nothing and says so.
      expect(await runner.cancelRun(runId)).to.equal(false);
      expect((await runner.getRun(runId)).text).to.equal(result.text);
    });

    it('cancelRun stops the run at its next step and leaves the thread whole (unchanged here)', async () => {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      const thread = agent.getNewThread();
      const runId = await researcher.start('research', { thread });
      while (executions.length === 0) await new Promise((r) => setTimeout(r, 20));
      expect(await runner.cancelRun(runId)).to.equal(true);
      open();
      const error = await runner.getRun(runId).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(DurableRunCancelledError);
      // It has ended: cancelling again has nothing to stop.
      expect(await runner.cancelRun(runId)).to.equal(false);
      expect(await agent.getMessages(thread)).to.deep.equal([]);
      expect(executions).to.have.length(1);
    });

    it('a run past its timeout is cancelled the same way', async () => {
      gate = new Promise(() => {});
      const thread = agent.getNewThread();
      const runId = await researcher.start('research', { thread, timeoutMs: 300 });
      const error = await runner.getRun(runId).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(DurableRunCancelledError);
      expect(await agent.getMessages(thread)).to.deep.equal([]);
    });

    it('two runs on one thread through a partitioned queue never overlap: both turns land whole, in order', async () => {
      const thread = agent.getNewThread();
      const partitionKey = 'thread-1';
      const first = await researcher.start('research', { thread, queue: 'perThread', partitionKey });
      // The second run starts from the thread as serialized now; the store key is what it continues.
      const second = await researcher.start('research again', { thread, queue: 'perThread', partitionKey });
      await runner.getRun(first);
      await runner.getRun(second);
      const stored: ChatMessage[] = await agent.getMessages(thread);
      expect(stored).to.have.length(12);
      expect(stored.filter((m) => m.additionalProperties?.[DURABLE_TURN_KEY]).map((m) => m.additionalProperties![DURABLE_TURN_KEY])).to.deep.equal([`${first}#0`, `${second}#0`]);
    });

    it('bad input: an unknown run, an unknown queue and a partition key without a partitioned queue are typed errors', async () => {
      expect(await runner.getRun('no-such-run').then(() => undefined, (e: unknown) => e)).to.be.instanceOf(DurableRunNotFoundError);
      expect(await researcher.start('x', { queue: 'nope' }).then(() => undefined, (e: unknown) => (e as Error).message)).to.match(/found "nope"; configured queues: perThread/);
      expect(await researcher.start('x', { partitionKey: 'k' }).then(() => undefined, (e: unknown) => (e as Error).message)).to.match(/partitionKey needs a queue with partitionConcurrency/);
    });

    it('a run recorded by another application version is reported, not replayed', async () => {
      const countFile = join(dir.path, 'version.count');
      const resultFile = join(dir.path, 'version.json');
      const runId = `old-version-${RUN_ID}`;
      const exit = await runWorker({ DBOS_SCHEMA: SCHEMA, STORE: 'memory', COUNT_FILE: countFile, RESULT_FILE: resultFile, RUN_ID: runId, APP_VERSION: 'v-old', INPUT: 'please deploy', ACTION: 'start,wait-approval' });
      expect(exit.code, exit.stderr).to.equal(0);
      const error = await runner.getRun(runId).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(DurableRunVersionError);
      expect((error as DurableRunVersionError).runVersion).to.equal('v-old');
      expect((error as Error).message).to.include('run a worker of version "v-old"');
      expect(countLines(countFile, 'start')).to.equal(0);
      await runner.cancelRun(runId);
      expect(readJson<DurableRunWaiting>(resultFile).approvalRequests).to.have.length(1);
    });
  }),
);
