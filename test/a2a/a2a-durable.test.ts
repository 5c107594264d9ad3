import 'reflect-metadata';
import { type Message, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChatAgent, ConfigurationError, type DurableRunUpdate, tool } from 'skein';
import { A2AServer, DurableArtifact, PostgresA2AContextStore, PostgresTaskStore, partsText } from 'skein/a2a';
import { DbosDurableRunner, durableAgent } from 'skein/dbos';
import { z } from 'zod';
import { ScriptedClient } from '../dbos/fixtures/scripted-client.js';
import { DATABASE_URL, RUN_ID, dropSchema, postgresAvailable, tempDir, withService } from '../stores/services.js';
import { until } from '../support/async-expectations.js';
import { startServerProcess } from '../support/server-process.js';
import { userMessage } from './remote-fixtures.js';

const NEEDS_POSTGRES = 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL';
const INSTANCE = fileURLToPath(new URL('./fixtures/durable-a2a-instance.js', import.meta.url));
/** The scripted model's answer after fetch_page(1) and summarize(2) returned these texts. */
const ANSWER = 'done ("page 1"; "summary 2")';

/** What an A2A client shows: each artifact by id, `append` adding parts and otherwise replacing the artifact. */
class ClientView {
  readonly artifacts = new Map<string, string>();
  readonly states: TaskState[] = [];
  /** Every text the client was shown, in order (to see a text shown, then taken back). */
  readonly shown: string[] = [];
  taskId = '';
  statusMessage: Message | undefined;

  take(event: StreamResponse): void {
    const payload = event.payload;
    if (payload?.$case === 'task') {
      this.taskId = payload.value.id;
      for (const a of payload.value.artifacts) this.artifacts.set(a.artifactId, partsText(a.parts));
      if (payload.value.status) this.states.push(payload.value.status.state);
    } else if (payload?.$case === 'artifactUpdate') {
      const { artifact, append } = payload.value;
      const text = partsText(artifact!.parts);
      this.artifacts.set(artifact!.artifactId, (append ? (this.artifacts.get(artifact!.artifactId) ?? '') : '') + text);
      this.shown.push(this.text());
    } else if (payload?.$case === 'statusUpdate') {
      this.states.push(payload.value.status!.state);
      this.statusMessage = payload.value.status!.message;
    }
  }

  text(): string {
    return [...this.artifacts.values()].join('');
  }
}

async function readAll(stream: AsyncGenerator<StreamResponse>, view: ClientView): Promise<void> {
  for await (const event of stream) view.take(event);
}

function stream(client: Client, text: string, ids: { contextId?: string; taskId?: string } = {}): AsyncGenerator<StreamResponse> {
  return client.sendMessageStream({ tenant: '', message: userMessage(text, ids), configuration: undefined, metadata: undefined });
}

withService('A2A server with a durable agent (DBOS on PostgreSQL)', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('A2A durable agents', function () {
    this.timeout(60_000);
    const prefix = `a2adur_${RUN_ID}`;
    const dbosSchema = `dbos_${RUN_ID}_a2a`;
    const executions: string[] = [];
    let gate: Promise<void> = Promise.resolve();
    const tools = [
      tool({ name: 'fetch_page', parameters: z.object({ step: z.number() }), execute: async ({ step }, c) => (executions.push(`fetch_page ${c.idempotencyKey}`), await gate, `page ${step}`) }),
      tool({ name: 'summarize', parameters: z.object({ step: z.number() }), execute: ({ step }, c) => (executions.push(`summarize ${c.idempotencyKey}`), `summary ${step}`) }),
      tool({ name: 'deploy', parameters: z.object({ step: z.number() }), requiresApproval: true, execute: async () => (executions.push('deploy'), await gate, 'deployed') }),
    ];
    const agent = new ChatAgent({ name: 'a2a-researcher', chatClient: new ScriptedClient({ chunkDelayMs: 30 }), tools });
    const runner = new DbosDurableRunner({ systemDatabaseUrl: DATABASE_URL, schema: dbosSchema, pollingIntervalMs: 50 });
    const durable = { agent: durableAgent(agent, { runner }), runner };
    const contextStore = new PostgresA2AContextStore({ connectionString: DATABASE_URL, schema: prefix });
    const taskStore = new PostgresTaskStore({ connectionString: DATABASE_URL, schema: prefix });
    const quiet = { warn: () => {}, error: (m: string, e: unknown) => console.error(m, e) };
    // Two instances on the same stores and the same runner: B never runs A's tasks itself.
    const serverA = new A2AServer({ agent, durable, contextStore, taskStore, logger: quiet });
    const serverB = new A2AServer({ agent, durable, contextStore, taskStore, logger: quiet });
    let a: Client;
    let b: Client;

    before(async () => {
      await runner.launch();
      a = await new ClientFactory().createFromUrl(await serverA.listen());
      b = await new ClientFactory().createFromUrl(await serverB.listen());
    });

    after(async () => {
      await serverA.close();
      await serverB.close();
      await runner.shutdown();
      await contextStore.close();
      await taskStore.close();
      await dropSchema(prefix);
      await dropSchema(dbosSchema);
    });

    beforeEach(() => {
      executions.length = 0;
      gate = Promise.resolve();
    });

    it('streams a task as a durable run (run id = task id) and continues the context thread in the next task', async () => {
      const first = new ClientView();
      await readAll(stream(a, 'find sources'), first);
      expect(first.states.at(-1)).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(first.text()).to.equal(ANSWER);
      // The answer streamed in pieces before the whole artifact.
      expect(first.shown.filter((t) => t.length > 0 && t !== ANSWER).length).to.be.greaterThan(1);
      const run = await runner.getRun(first.taskId);
      expect(run.text).to.equal(ANSWER);
      expect(executions).to.deep.equal([`fetch_page ${first.taskId}:call_fetch_page_0`, `summarize ${first.taskId}:call_summarize_1`]);

      const task = await a.getTask({ tenant: '', id: first.taskId, historyLength: 0 });
      const second = new ClientView();
      await readAll(stream(a, 'again', { contextId: task.contextId }), second);
      expect(second.text()).to.equal(ANSWER);
      const thread = await agent.deserializeThread((await runner.getRun(second.taskId)).thread);
      const users = (await thread.messageStore!.listMessages()).filter((m) => m.role === 'user').map((m) => m.contents.map((c) => (c.kind === 'text' ? c.text : '')).join(''));
      expect(users).to.deep.equal(['find sources', 'again']);

      // message/send (not streamed) answers with the finished task, read from the run too.
      const sent = await b.sendMessage({ tenant: '', message: userMessage('once more', { contextId: task.contextId }), configuration: undefined, metadata: undefined });
      if ('messageId' in sent) expect.fail('expected a task');
      expect(sent.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(sent.artifacts.map((x) => partsText(x.parts)).join('')).to.equal(ANSWER);
      expect((await runner.getRun(sent.id)).text).to.equal(ANSWER);
    });

    it('a client resubscribing on another instance mid-run reads the rest of the run from the durable stream', async () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      const live = new ClientView();
      const liveDone = readAll(stream(a, 'research this'), live);
      await until(() => executions.length > 0); // the run is inside fetch_page
      const task = await b.getTask({ tenant: '', id: live.taskId, historyLength: 0 });
      expect(task.status?.state).to.equal(TaskState.TASK_STATE_WORKING);
      const rejoined = new ClientView();
      const rejoinDone = readAll(b.resubscribeTask({ tenant: '', id: live.taskId }), rejoined);
      release();
      await Promise.all([liveDone, rejoinDone]);
      expect(rejoined.states[0]).to.equal(TaskState.TASK_STATE_WORKING);
      expect(rejoined.states.at(-1)).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(rejoined.text()).to.equal(ANSWER);
      expect(live.text()).to.equal(ANSWER);
      const stored = await b.getTask({ tenant: '', id: live.taskId, historyLength: 0 });
      expect(stored.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(stored.artifacts.map((x) => partsText(x.parts)).join('')).to.equal(ANSWER);
      expect(executions.filter((e) => e.startsWith('fetch_page'))).to.have.length(1);
    });

    it('an approval puts the task input-required while the run waits; the answer on the task finishes the run', async () => {
      const asked = new ClientView();
      await readAll(stream(a, 'deploy it'), asked);
      expect(asked.states.at(-1)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
      const data = asked.statusMessage?.parts.find((p) => p.content?.$case === 'data')?.content?.value as { type: string; calls: { callId: string }[] } | undefined;
      expect(data?.type).to.equal('skein.approval-request');
      expect(data?.calls.map((c) => c.callId)).to.deep.equal(['call_deploy_0']);
      expect((await runner.getWaiting(asked.taskId))?.approvalRequests.map((r) => r.callId)).to.deep.equal(['call_deploy_0']);
      expect(executions).to.deep.equal([]);

      const task = await a.getTask({ tenant: '', id: asked.taskId, historyLength: 0 });
      const answered = new ClientView();
      // Answered through the other instance: nothing of the run is in A's memory.
      await readAll(stream(b, 'approve', { contextId: task.contextId, taskId: asked.taskId }), answered);
      expect(answered.states.at(-1)).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(answered.text()).to.equal('done ("deployed")');
      expect(executions).to.deep.equal(['deploy']);
    });

    it('a resubscribe on another instance during the turn after an approval reads that turn on, not the approval again', async () => {
      const asked = new ClientView();
      await readAll(stream(a, 'deploy it'), asked);
      expect(asked.states.at(-1)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
      const task = await a.getTask({ tenant: '', id: asked.taskId, historyLength: 0 });
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      const live = new ClientView();
      const liveDone = readAll(stream(a, 'approve', { contextId: task.contextId, taskId: asked.taskId }), live);
      await until(() => executions.includes('deploy'));
      const rejoined = new ClientView();
      const rejoinDone = readAll(b.resubscribeTask({ tenant: '', id: asked.taskId }), rejoined);
      release();
      await Promise.all([liveDone, rejoinDone]);
      expect(rejoined.states.at(-1)).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(live.states.at(-1)).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(live.text()).to.contain('done ("deployed")');
      const stored = await b.getTask({ tenant: '', id: asked.taskId, historyLength: 0 });
      expect(stored.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
      // The turn after the approval is its own artifact; the one before is kept.
      const texts = stored.artifacts.map((x) => partsText(x.parts));
      expect(texts.at(-1)).to.equal('done ("deployed")');
      expect(texts.filter((t) => t.includes('done'))).to.have.length(1);
      expect(executions).to.deep.equal(['deploy']);
    });

    it('refuses a durable agent of another agent with a ConfigurationError', () => {
      const other = new ChatAgent({ name: 'other', chatClient: new ScriptedClient() });
      expect(() => new A2AServer({ agent: other, durable })).to.throw(ConfigurationError, /durable\.agent\.agent === agent/);
    });

    it('a process killed while the answer streams: another recovers the run and tasks/get returns the finished task, the answer once', async function () {
      const dir = tempDir();
      const countFile = join(dir.path, 'count');
      const children: ChildProcess[] = [];
      try {
        const env = { DATABASE_URL, PREFIX: prefix, DBOS_SCHEMA: `${dbosSchema}_kill`, COUNT_FILE: countFile };
        const first = await startServerProcess(INSTANCE, { ...env, KILL_IN_ANSWER: '1' }, children);
        const killed = new Promise((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));
        const client = await new ClientFactory().createFromUrl(first.url);
        const seen = new ClientView();
        await readAll(stream(client, 'find sources'), seen).catch(() => undefined); // the stream breaks with the process
        expect(await killed).to.equal('SIGKILL');
        expect(seen.taskId).not.to.equal('');
        // The client saw the start of the answer from the cut attempt (so the run's stream holds it).
        expect(seen.text().length).to.be.greaterThan(0);
        expect(seen.text()).not.to.equal(ANSWER);
        expect(ANSWER.startsWith(seen.text())).to.equal(true);

        const second = await startServerProcess(INSTANCE, env, children);
        const again = await new ClientFactory().createFromUrl(second.url);
        let finished: Task | undefined;
        await until(async () => {
          finished = await again.getTask({ tenant: '', id: seen.taskId, historyLength: 0 });
          return finished.status?.state === TaskState.TASK_STATE_COMPLETED;
        });
        expect(finished!.artifacts.map((x) => partsText(x.parts)).join('')).to.equal(ANSWER);
        const lines = existsSync(countFile) ? readFileSync(countFile, 'utf8').trim().split('\n') : [];
        expect(lines).to.deep.equal([`fetch_page ${seen.taskId}:call_fetch_page_0`, `summarize ${seen.taskId}:call_summarize_1`]);
      } finally {
        for (const child of children) child.kill('SIGKILL');
        dir.remove();
        await dropSchema(`${dbosSchema}_kill`);
      }
    });
  }),
);

describe('DurableArtifact: the stream rule for a model call made again', () => {
  const text = (offset: number, t: string, modelCall?: DurableRunUpdate['modelCall']): DurableRunUpdate => ({ offset, role: 'assistant', text: t, contents: [{ kind: 'text', text: t }], ...(modelCall ? { modelCall } : {}) });

  it('replaces the artifact (append: false) without the cut attempt when the call starts again', () => {
    const view = new DurableArtifact();
    expect(view.add(text(0, 'Hel', { id: '1.1', attempt: 'x', first: true }))).to.deep.include({ append: false });
    expect(view.add(text(1, 'lo', { id: '1.1', attempt: 'x' }))).to.deep.include({ append: true });
    view.add({ offset: 2, role: 'tool', text: '', contents: [{ kind: 'function-result', callId: 'c', result: 'r' }] });
    view.add(text(3, 'Wor', { id: '1.2', attempt: 'y', first: true }));
    const replaced = view.add(text(4, 'Done', { id: '1.2', attempt: 'z', first: true }));
    expect(replaced?.append).to.equal(false);
    expect(partsText(replaced!.parts)).to.equal('HelloDone');
    expect(partsText(view.parts())).to.equal('HelloDone');
    expect(view.offset).to.equal(4);
  });

  it('an empty first entry of a new attempt still drops the cut text', () => {
    const view = new DurableArtifact();
    view.add(text(0, 'par', { id: '1.1', attempt: 'x', first: true }));
    const replaced = view.add({ offset: 1, role: 'assistant', text: '', contents: [], modelCall: { id: '1.1', attempt: 'y', first: true } });
    expect(replaced).to.deep.equal({ parts: [], append: false });
    expect(view.add(text(2, 'full', { id: '1.1', attempt: 'y' }))).to.deep.include({ append: true });
    expect(partsText(view.parts())).to.equal('full');
  });
});
