import { expect } from 'chai';
import { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatAgent, type ChatMessage, type ChatMessageStoreFactory, type DurableRunResult, type DurableRunUpdate, type DurableRunWaiting } from 'skein';
import { OpenAIResponsesClient } from 'skein/openai';
import { PostgresChatMessageStoreFactory } from 'skein/store-postgres';
import { RedisChatMessageStoreFactory } from 'skein/store-redis';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { Emulator } from 'skein/testing';
import { tempDir } from '../stores/services.js';
import { DATABASE_URL, NEEDS_POSTGRES_AND_REDIS, REDIS_URL, RUN_ID, countLines, dropSchema, postgresAvailable, readJson, redisAvailable, runWorker, withService } from './dbos-support.js';
import { ScriptedClient } from './fixtures/scripted-client.js';

const DBOS_SCHEMA = `dbos_${RUN_ID}_rec`;

/** The user's text messages and the assistant's final answers in `messages`. */
function turnShape(messages: readonly ChatMessage[]): { users: number; answers: string[]; toolResults: number } {
  const texts = (m: ChatMessage) => m.contents.flatMap((c) => (c.kind === 'text' ? [c.text] : []));
  return {
    users: messages.filter((m) => m.role === 'user' && texts(m).length).length,
    answers: messages.filter((m) => m.role === 'assistant').flatMap(texts),
    toolResults: messages.flatMap((m) => m.contents).filter((c) => c.kind === 'function-result').length,
  };
}

withService('durable runs on DBOS: recovery', (await postgresAvailable()) && (await redisAvailable()), NEEDS_POSTGRES_AND_REDIS, () =>
  describe('after SIGKILL (child processes)', function () {
    this.timeout(120_000);
    const dir = tempDir();

    after(async () => {
      await dropSchema(DBOS_SCHEMA);
      await dropSchema(`store_${RUN_ID}`);
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`dbos-${RUN_ID}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      dir.remove();
    });

    /** Starts a run, kills its process at each point in turn, then lets a last process finish it. */
    async function killAtEachPoint(store: string, storeArg: string | undefined, points: string[], input?: string, extra: Record<string, string> = {}) {
      const runId = `run-${store}-${RUN_ID}`;
      const countFile = join(dir.path, `${store}.count`);
      const resultFile = join(dir.path, `${store}.result.json`);
      const base = { DBOS_SCHEMA, STORE: store, STORE_ARG: storeArg, COUNT_FILE: countFile, RESULT_FILE: resultFile, RUN_ID: runId, INPUT: input, ...extra };
      for (const [i, point] of points.entries()) {
        const exit = await runWorker({ ...base, ACTION: i === 0 ? 'start,result' : 'result', KILL_AT: point });
        expect(exit.signal, `the process should die at ${point}: ${exit.stderr}`).to.equal('SIGKILL');
      }
      const exit = await runWorker({ ...base, ACTION: 'result' });
      expect(exit.code, exit.stderr).to.equal(0);
      const result = readJson<DurableRunResult>(resultFile);
      expect(countLines(countFile, 'killed ')).to.equal(points.length);
      return { result, countFile };
    }

    async function storedMessages(factory: ChatMessageStoreFactory, result: DurableRunResult): Promise<ChatMessage[]> {
      const agent = new ChatAgent({ name: 'worker', chatClient: new ScriptedClient(), chatMessageStoreFactory: factory });
      const thread = await agent.deserializeThread(result.thread);
      return agent.getMessages(thread);
    }

    const points = ['model:2', 'between', 'inside', 'append'];
    const expectedAnswer = 'done ("fetch_page 1 ok"; "summarize 2 ok")';

    function expectToolsOnce(countFile: string) {
      expect(countLines(countFile, 'done fetch_page'), 'fetch_page completed').to.equal(1);
      expect(countLines(countFile, 'done summarize'), 'summarize completed').to.equal(1);
    }

    function expectWholeTurnOnce(messages: readonly ChatMessage[]) {
      expect(turnShape(messages)).to.deep.equal({ users: 1, answers: [expectedAnswer], toolResults: 2 });
      expect(messages).to.have.length(6);
    }

    it('SQLite thread: killed during a model call, between two tools, inside a tool and during the append, the run finishes with every tool once, the turn once, and its stream (whole replies) without repeats', async () => {
      const path = join(dir.path, 'threads.db');
      const { result, countFile } = await killAtEachPoint('sqlite', path, points, undefined, { STREAM_DELTAS: 'false' });
      expect(result.text).to.equal(expectedAnswer);
      expectToolsOnce(countFile);
      // summarize was killed inside once, so it started twice (a step is at-least-once), with the same key.
      expect(countLines(countFile, 'start summarize')).to.equal(2);
      expect(new Set(readLinesOf(countFile, 'start summarize').map((l) => l.split(' ')[2])).size).to.equal(1);
      const factory = new SqliteChatMessageStoreFactory({ path });
      try {
        expectWholeTurnOnce(await storedMessages(factory, result));
      } finally {
        factory.close();
      }
      // The run's stream, read by another process: the model call made twice (killed before it was
      // recorded) and every replayed one show once; the answer once.
      const streamFile = join(dir.path, 'sqlite.stream.json');
      const reader = await runWorker({ DBOS_SCHEMA, STORE: 'sqlite', STORE_ARG: path, COUNT_FILE: countFile, RESULT_FILE: streamFile, RUN_ID: `run-sqlite-${RUN_ID}`, ACTION: 'stream' });
      expect(reader.code, reader.stderr).to.equal(0);
      const updates = readJson<DurableRunUpdate[]>(streamFile);
      expect(updates.map((u) => u.role)).to.deep.equal(['assistant', 'tool', 'assistant', 'tool', 'assistant']);
      expect(updates.map((u) => u.offset)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(updates.filter((u) => u.text === expectedAnswer)).to.have.length(1);
    });

    it('streamed deltas: killed while streaming the answer, a live reader that reconnects after recovery is told to drop the cut attempt, and every reader ends with the answer once', async () => {
      const path = join(dir.path, 'deltas.db');
      const runId = `deltas-${RUN_ID}`;
      const countFile = join(dir.path, 'deltas.count');
      const file = (name: string) => join(dir.path, `deltas.${name}.json`);
      const base = { DBOS_SCHEMA, STORE: 'sqlite', STORE_ARG: path, COUNT_FILE: countFile, RUN_ID: runId, CHUNK_MS: '20' };
      // The answer streams in pieces of 3 characters, one per 20 ms; the process dies before piece 8.
      const live = runWorker({ ...base, ACTION: 'stream-until-idle', EXECUTOR_ID: 'reader', RESULT_FILE: file('live'), STREAM_IDLE_MS: '2000' });
      const killed = await runWorker({ ...base, ACTION: 'start,result', KILL_AT: 'stream:3:8', RESULT_FILE: file('killed') });
      expect(killed.signal, killed.stderr).to.equal('SIGKILL');
      expect((await live).code).to.equal(0);
      const shown = readJson<DurableRunUpdate[]>(file('live'));
      const cut = shown.filter((u) => u.modelCall?.id === '0.2');
      // The live reader saw part of the answer, and no more than part.
      expect(cut.length).to.be.greaterThan(0);
      const partial = cut.map((u) => u.text).join('');
      expect(expectedAnswer.startsWith(partial) && partial.length < expectedAnswer.length, partial).to.equal(true);
      expect((await runWorker({ ...base, ACTION: 'result', RESULT_FILE: file('result') })).code).to.equal(0);
      const result = readJson<DurableRunResult>(file('result'));
      expect(result.text).to.equal(expectedAnswer);
      expectToolsOnce(countFile);
      const factory = new SqliteChatMessageStoreFactory({ path });
      try {
        expectWholeTurnOnce(await storedMessages(factory, result));
      } finally {
        factory.close();
      }
      // The live reader reconnects after the last offset it saw, from another process.
      const last = shown[shown.length - 1]!.offset;
      expect((await runWorker({ ...base, ACTION: 'stream', EXECUTOR_ID: 'reader', STREAM_AFTER: String(last), RESULT_FILE: file('resumed') })).code).to.equal(0);
      const resumed = readJson<DurableRunUpdate[]>(file('resumed'));
      expect(resumed[0]!.offset).to.equal(last + 1);
      const again = resumed.filter((u) => u.modelCall?.id === '0.2');
      expect(again[0]!.modelCall!.first).to.equal(true);
      expect(again[0]!.modelCall!.attempt).not.to.equal(cut[0]!.modelCall!.attempt);
      expect(textByModelCall([...shown, ...resumed])['0.2']).to.equal(expectedAnswer);
      // The replayed model calls (recorded before the kill) wrote nothing again: only the cut one has two attempts.
      const everything = [...shown, ...resumed];
      for (const id of ['0.0', '0.1']) expect(new Set(everything.filter((u) => u.modelCall?.id === id).map((u) => u.modelCall!.attempt)).size, id).to.equal(1);
      // A reader from the start, after the fact, gets the same by the same rule.
      expect((await runWorker({ ...base, ACTION: 'stream', EXECUTOR_ID: 'reader', RESULT_FILE: file('full') })).code).to.equal(0);
      const full = readJson<DurableRunUpdate[]>(file('full'));
      expect(full).to.deep.equal(everything);
      expect(textByModelCall(full)['0.2']).to.equal(expectedAnswer);
      // Coalesced: fewer stream entries than the 14 pieces the answer came in.
      expect(again.length).to.be.lessThan(Math.ceil(expectedAnswer.length / 3));
    });

    it('PostgreSQL thread: killed during a model call and during the append, the turn is stored once', async () => {
      const { result, countFile } = await killAtEachPoint('postgres', `store_${RUN_ID}`, ['model:2', 'append']);
      expectToolsOnce(countFile);
      const factory = new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema: `store_${RUN_ID}` });
      try {
        expectWholeTurnOnce(await storedMessages(factory, result));
      } finally {
        await factory.close();
      }
    });

    it('Redis thread: killed during the append, the turn is stored once', async () => {
      const { result, countFile } = await killAtEachPoint('redis', `dbos-${RUN_ID}:`, ['append']);
      expectToolsOnce(countFile);
      const factory = new RedisChatMessageStoreFactory({ url: REDIS_URL, keyPrefix: `dbos-${RUN_ID}:` });
      try {
        expectWholeTurnOnce(await storedMessages(factory, result));
      } finally {
        await factory.close();
      }
    });

    it('in-memory thread: the thread travels in the run; killed between two tools, the result holds the turn once', async () => {
      const { result, countFile } = await killAtEachPoint('memory', undefined, ['between']);
      expectToolsOnce(countFile);
      // The serialized in-memory thread carries its messages: they travel in the run's input and output.
      expect(JSON.stringify(result.thread)).to.include('summarize 2 ok');
      const agent = new ChatAgent({ name: 'worker', chatClient: new ScriptedClient() });
      expectWholeTurnOnce(await agent.getMessages(await agent.deserializeThread(result.thread)));
    });

    it('Responses service thread: killed after the service answered each model call, the tools ran once and the service history holds the turn once', async () => {
      const emulator = await Emulator.start();
      try {
        const input = 'call fetch_page {"step":1} and call summarize {"step":2}';
        const { result, countFile } = await killAtEachPoint('responses', emulator.openaiBaseURL, ['model:1', 'model:2'], input);
        expectToolsOnce(countFile);
        expect(result.text).to.equal('fetch_page returned: fetch_page 1 ok\nsummarize returned: summarize 2 ok');
        const agent = new ChatAgent({ name: 'worker', chatClient: new OpenAIResponsesClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, model: 'gpt-test', maxRetries: 0 }) });
        const thread = await agent.deserializeThread(result.thread);
        expect(thread.serviceThreadId).to.match(/^resp_/);
        const history = await agent.getMessages(thread);
        const shape = turnShape(history);
        expect(shape.users).to.equal(1);
        expect(shape.answers).to.deep.equal([result.text]);
        expect(shape.toolResults).to.equal(2);
      } finally {
        await emulator.stop();
      }
    });

    it('a run failed by the model service (HTTP 400) rejects getRun in another process with a ServiceError of the same status and message', async () => {
      const emulator = await Emulator.start();
      try {
        emulator.injectFault({ kind: 'status', status: 400, message: 'The model refused this request (injected).' });
        const resultFile = join(dir.path, 'failed.json');
        const base = { DBOS_SCHEMA, STORE: 'responses', STORE_ARG: emulator.openaiBaseURL, COUNT_FILE: join(dir.path, 'failed.count'), RESULT_FILE: resultFile, RUN_ID: `failed-${RUN_ID}` };
        expect((await runWorker({ ...base, ACTION: 'start,result' })).code).to.equal(0);
        const first = readJson<{ error: { name: string; message: string; isServiceError: boolean; status?: number } }>(resultFile).error;
        expect(first.isServiceError).to.equal(true);
        expect(first.status).to.equal(400);
        expect(first.message).to.contain('The model refused this request (injected).');
        expect((await runWorker({ ...base, ACTION: 'result' })).code).to.equal(0);
        expect(readJson<{ error: typeof first }>(resultFile).error).to.deep.equal(first);
      } finally {
        await emulator.stop();
      }
    });

    it('an approval waits with no process alive, is answered from another process, and a third finishes the run: the tool runs once', async () => {
      const path = join(dir.path, 'approvals.db');
      const runId = `approve-${RUN_ID}`;
      const countFile = join(dir.path, 'approve.count');
      const resultFile = join(dir.path, 'approve.json');
      const base = { DBOS_SCHEMA, STORE: 'sqlite', STORE_ARG: path, COUNT_FILE: countFile, RESULT_FILE: resultFile, RUN_ID: runId };
      expect((await runWorker({ ...base, ACTION: 'start,wait-approval', INPUT: 'please deploy' })).code).to.equal(0);
      const waiting = readJson<DurableRunWaiting>(resultFile);
      expect(waiting.approvalRequests.map((r) => r.name)).to.deep.equal(['deploy']);
      expect(countLines(countFile, 'start deploy')).to.equal(0);
      expect((await runWorker({ ...base, ACTION: 'approve', CALL_ID: waiting.approvalRequests[0]!.callId, APPROVED: 'true' })).code).to.equal(0);
      expect((await runWorker({ ...base, ACTION: 'result' })).code).to.equal(0);
      const result = readJson<DurableRunResult>(resultFile);
      expect(result.text).to.equal('done ("deploy 1 ok")');
      expect(countLines(countFile, 'done deploy')).to.equal(1);
      const factory = new SqliteChatMessageStoreFactory({ path });
      try {
        // Turn 1 (the question and the call waiting for approval), then turn 2 (its result and the answer), each once.
        expect((await storedMessages(factory, result)).map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      } finally {
        factory.close();
      }
    });

    it('two workers share one queue: one is killed inside a tool, the other finishes its runs, and the killed one restarted finishes its own; every tool ran to completion once', async () => {
      const runIds = [1, 2, 3, 4, 5, 6].map((n) => `queued-${n}-${RUN_ID}`);
      const countFile = join(dir.path, 'queue.count');
      const base = { DBOS_SCHEMA, STORE: 'sqlite', STORE_ARG: join(dir.path, 'queue.db'), COUNT_FILE: countFile, RUN_IDS: runIds.join(','), TOOL_DELAY_MS: '400' };
      const a = runWorker({ ...base, ACTION: 'enqueue,results', KILL_AT: 'inside', WORKER: 'A', EXECUTOR_ID: 'worker-a', RESULT_FILE: join(dir.path, 'a.json') });
      const b = runWorker({ ...base, ACTION: 'results', WORKER: 'B', EXECUTOR_ID: 'worker-b', RESULT_FILE: join(dir.path, 'b.json') });
      expect((await a).signal).to.equal('SIGKILL');
      const restarted = await runWorker({ ...base, ACTION: 'results', WORKER: 'A2', EXECUTOR_ID: 'worker-a', RESULT_FILE: join(dir.path, 'a2.json') });
      expect(restarted.code, restarted.stderr).to.equal(0);
      expect((await b).code).to.equal(0);
      const answers = readJson<Record<string, string>>(join(dir.path, 'b.json'));
      expect(Object.values(answers)).to.deep.equal(runIds.map(() => expectedAnswer));
      const lines = readFileSync(countFile, 'utf8').split('\n');
      for (const runId of runIds) {
        for (const name of ['fetch_page', 'summarize']) expect(lines.filter((l) => l.startsWith(`done ${name} ${runId}:`)), `${name} of ${runId}`).to.have.length(1);
      }
      expect(lines.some((l) => l.startsWith('done') && l.endsWith(' B')), 'worker B ran runs').to.equal(true);
      expect(lines.some((l) => l.startsWith('done') && l.endsWith(' A2')), 'the restarted worker finished the killed run').to.equal(true);
    });

    it('workers launched at the same moment on a fresh system database all come up', async () => {
      const schema = `dbos_${RUN_ID}_fresh`;
      try {
        const env = { DBOS_SCHEMA: schema, STORE: 'memory', COUNT_FILE: join(dir.path, 'fresh.count'), RUN_ID: 'unused', ACTION: 'none' };
        const exits = await Promise.all([runWorker(env), runWorker(env), runWorker(env)]);
        expect(exits.map((e) => e.code)).to.deep.equal([0, 0, 0]);
      } finally {
        await dropSchema(schema);
      }
    });
  }),
);

/** The text a reader shows for each model call: its deltas since the last `first` (the rule of DurableRunUpdate.modelCall). */
function textByModelCall(updates: readonly DurableRunUpdate[]): Record<string, string> {
  const text: Record<string, string> = {};
  for (const u of updates) {
    if (!u.modelCall) continue;
    text[u.modelCall.id] = (u.modelCall.first ? '' : (text[u.modelCall.id] ?? '')) + u.text;
  }
  return text;
}

function readLinesOf(file: string, prefix: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith(prefix));
}
