import type { AgentsClient } from '@azure/ai-agents';
import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import {
  AbortError,
  type AgentRunResponseUpdate,
  agentToken,
  ChatAgent,
  createContainer,
  NotFoundError,
  ThreadCompatibilityError,
  tool,
} from 'skein';
import {
  AzureAIAgent,
  type AzureAIAgentOptions,
  azureAIAgentsPlugin,
  createEmulatorAgentsClient,
  emulatorConnection,
  FoundryRunError,
  FoundryRunTimeoutError,
} from 'skein/azure-ai-agents';
import { FakeChatClient } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';
import { z } from 'zod';

const weather = tool({
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});
const time = tool({
  name: 'get_time',
  parameters: z.object({ zone: z.string() }),
  execute: ({ zone }) => `12:00 ${zone}`,
});
const broken = tool({
  name: 'get_stock',
  parameters: z.object({ symbol: z.string() }),
  execute: () => {
    throw new Error('exchange closed');
  },
});

/** Polls `check` (no timed assertion: it only waits for the emulator to see a request). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('Foundry Agents plugin against the emulator (real @azure/ai-agents client)', () => {
  let client: AgentsClient;

  const newAgent = (options: Partial<AzureAIAgentOptions> = {}) =>
    new AzureAIAgent({ client, model: 'gpt-4o', name: 'helper', instructions: 'You are helpful.', pollIntervalMs: 1, ...options });
  const runsPosted = () => running.emulator.requests.filter((r) => r.method === 'POST' && /\/threads\/[^/]+\/runs$/.test(r.path));
  const cancels = () => running.emulator.requests.filter((r) => r.path.endsWith('/cancel'));

  const running = emulatorPerTest({ apiKey: 'foundry-token' });
  beforeEach(() => {
    client = createEmulatorAgentsClient(running.emulator.url, { token: 'foundry-token', clientOptions: { retryOptions: { maxRetries: 0 } } });
  });

  describe('multi-turn memory', () => {
    it('keeps the history in one Foundry thread and sends only the new message each turn', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      expect((await agent.run('My name is Ada.', { thread })).text).to.equal('Nice to meet you, Ada!');
      const second = await agent.run("What's my name?", { thread });
      expect(second.text).to.equal('Your name is Ada.');
      expect(thread.serviceThreadId).to.match(/^thread_/);
      expect(thread.messageStore).to.equal(undefined);

      // Each turn's message goes with its run (additional_messages), never posted on its own.
      expect(running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages'))).to.deep.equal([]);
      const runs = running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/runs'));
      const sent = runs.map((r) => (r.body as { additional_messages: { role: string; content: string }[] }).additional_messages);
      expect(sent).to.deep.equal([[{ role: 'user', content: 'My name is Ada.' }], [{ role: 'user', content: "What's my name?" }]]);
      expect(running.emulator.requests.every((r) => r.query['api-version'] === 'v1')).to.equal(true);
      expect(running.emulator.requests[0].headers.authorization).to.equal('Bearer foundry-token');

      const history = [];
      for await (const m of client.messages.list(thread.serviceThreadId!, { order: 'asc' })) history.push(m.role);
      expect(history).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    });

    it('creates the Foundry agent once from its definition', async () => {
      const agent = newAgent({ tools: [weather] });
      await agent.run('hello');
      await agent.run('hello again');
      const created = running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/assistants'));
      expect(created).to.have.length(1);
      expect(created[0].body).to.deep.include({ model: 'gpt-4o', name: 'helper', instructions: 'You are helpful.' });
      const foundry = await client.getAgent(await agent.getFoundryAgentId());
      expect(foundry.tools.map((t) => t.type)).to.deep.equal(['function']);
    });

    it('binds an existing Foundry agent by id and adds its Skein tools to the run', async () => {
      const existing = await client.createAgent('gpt-4o', { name: 'portal-agent', instructions: 'Be brief.' });
      const agent = new AzureAIAgent({ client, agentId: existing.id, name: 'portal', tools: [weather], pollIntervalMs: 1 });
      const response = await agent.run('What is the weather in Oslo?');
      expect(response.text).to.equal('get_weather returned: Sunny in Oslo');
      expect(running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/assistants'))).to.have.length(1);
      const [run] = runsPosted();
      expect(run.body).to.deep.include({ assistant_id: existing.id });
      expect((run.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name)).to.deep.equal(['get_weather']);
      expect(await agent.getFoundryAgentId()).to.equal(existing.id);
    });
  });

  describe('serialization and resume', () => {
    it('resumes a thread in a new container from its JSON, with the agent binding carried', async () => {
      const connection = emulatorConnection(running.emulator.url, { token: 'foundry-token' });
      const config = () => ({
        plugins: [azureAIAgentsPlugin({ ...connection, pollIntervalMs: 1 })],
        agents: { support: { client: 'azure-ai-agents', model: 'gpt-4o', instructions: 'You are support.' } },
      });
      const first = createContainer(config()).get(agentToken('support'));
      const thread = first.getNewThread();
      await first.run('My name is Grace.', { thread });
      const json = JSON.parse(JSON.stringify(await thread.serialize()));
      expect(json).to.deep.include({ $type: 'service', version: 1, provider: 'azure-ai-agents', agent: 'support', serviceThreadId: thread.serviceThreadId });
      expect(json.state.continuation.agentId).to.match(/^asst_/);

      const second = createContainer(config()).get(agentToken('support'));
      const resumed = await second.deserializeThread(json);
      expect((await second.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Grace.');
      expect(resumed.serviceThreadId).to.equal(thread.serviceThreadId);
    });

    it('binds an existing agent from config (agentId) and its config tools', async () => {
      const existing = await client.createAgent('gpt-4o', { name: 'from-portal' });
      const connection = emulatorConnection(running.emulator.url, { token: 'foundry-token' });
      const container = createContainer({
        plugins: [azureAIAgentsPlugin({ ...connection, pollIntervalMs: 1 })],
        tools: [weather],
        agents: { portal: { client: 'azure-ai-agents', agentId: existing.id, tools: ['get_weather'] } },
      });
      const agent = container.get(agentToken('portal'));
      expect(agent).to.be.instanceOf(AzureAIAgent);
      expect((await agent.run('What is the weather in Rome?')).text).to.equal('get_weather returned: Sunny in Rome');
    });

    it('rejects a Foundry thread in an OpenAI agent, and an OpenAI thread in a Foundry agent', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      await agent.run('hi', { thread });
      const foundryJson = await thread.serialize();

      const openai = new ChatAgent({ chatClient: new FakeChatClient({ providerId: 'openai-assistants', threadKind: 'service' }), name: 'helper' });
      await expectRejection(openai.deserializeThread(foundryJson), ThreadCompatibilityError, /azure-ai-agents/);
      await expectRejection(openai.run('hi', { thread }), ThreadCompatibilityError, /azure-ai-agents/);

      const responsesThread = { $type: 'service', version: 1, provider: 'openai-responses', agent: 'helper', serviceThreadId: 'resp_123' };
      await expectRejection(agent.deserializeThread(responsesThread), ThreadCompatibilityError, /Foundry threads and OpenAI threads/);
      const storeThread = { $type: 'in-memory', version: 1, provider: 'azure-ai-agents', agent: 'helper', store: { messages: [] } };
      await expectRejection(agent.deserializeThread(storeThread), ThreadCompatibilityError, /message store/);
      expect(runsPosted()).to.have.length(1);
    });

    it('reports a deleted or unknown Foundry thread as NotFoundError', async () => {
      const agent = newAgent();
      const thread = await agent.deserializeThread({ $type: 'service', version: 1, provider: 'azure-ai-agents', agent: 'helper', serviceThreadId: 'thread_missing' });
      const error = await expectRejection(agent.run('hi', { thread }), NotFoundError, /thread_missing/);
      expect((error as NotFoundError).status).to.equal(404);
      expect(thread.serviceThreadId).to.equal('thread_missing');
    });
  });

  describe('tool round trips', () => {
    it('runs one tool call and submits its output to the waiting run', async () => {
      const agent = newAgent({ tools: [weather] });
      const thread = agent.getNewThread();
      const response = await agent.run('What is the weather in Paris?', { thread });
      expect(response.messages.map((m) => m.contents.map((c) => c.kind))).to.deep.equal([['function-call'], ['function-result'], ['text']]);
      expect(response.text).to.equal('get_weather returned: Sunny in Paris');
      const submitted = running.emulator.requests.filter((r) => r.path.endsWith('/submit_tool_outputs'));
      expect(submitted).to.have.length(1);
      expect(submitted[0].body).to.deep.include({ tool_outputs: [{ tool_call_id: 'call_1', output: 'Sunny in Paris' }] });
      expect(runsPosted()).to.have.length(1);
      const run = await client.runs.get(thread.serviceThreadId!, response.responseId!);
      expect(run.status).to.equal('completed');
    });

    it('runs several calls of one step and submits all outputs together, in step order', async () => {
      const agent = newAgent({ tools: [weather, time] });
      const response = await agent.run('call get_weather {"city":"Oslo"} and call get_time {"zone":"CET"}');
      const results = response.messages[1].contents;
      expect(results.map((c) => (c.kind === 'function-result' ? c.callId : ''))).to.deep.equal(['call_1', 'call_2']);
      expect(response.text).to.equal('get_weather returned: Sunny in Oslo\nget_time returned: 12:00 CET');
      const [submitted] = running.emulator.requests.filter((r) => r.path.endsWith('/submit_tool_outputs'));
      expect((submitted.body as { tool_outputs: unknown[] }).tool_outputs).to.have.length(2);
    });

    it('runs several rounds of calls in one run', async () => {
      const agent = newAgent({ tools: [weather], maxToolIterations: 2 });
      const thread = agent.getNewThread();
      const response = await agent.run('keep calling get_weather call get_weather {"city":"Bergen"}', { thread });
      const kinds = response.messages.map((m) => m.contents[0]?.kind);
      expect(kinds).to.deep.equal(['function-call', 'function-result', 'function-call', 'function-result', 'function-call', 'function-result']);
      const last = response.messages[5].contents[0];
      expect(last).to.deep.include({ kind: 'function-result', error: 'not run: the limit of 2 tool rounds for one run was reached.' });
      expect(running.emulator.requests.filter((r) => r.path.endsWith('/submit_tool_outputs'))).to.have.length(3);
      // All rounds on one run; it still wanted calls after the limit, so it was cancelled, not left waiting.
      expect(runsPosted()).to.have.length(1);
      expect(cancels()).to.have.length(1);
      expect((await agent.run('My name is Ada.', { thread })).text).to.equal('Nice to meet you, Ada!');
    });

    it('submits a failing tool as an error output the model can read', async () => {
      const agent = newAgent({ tools: [broken] });
      const response = await agent.run('call get_stock {"symbol":"MSFT"}');
      expect(response.text).to.equal('get_stock returned: Error: get_stock failed: exchange closed');
      const [submitted] = running.emulator.requests.filter((r) => r.path.endsWith('/submit_tool_outputs'));
      expect(submitted.body).to.deep.include({ tool_outputs: [{ tool_call_id: 'call_1', output: 'Error: get_stock failed: exchange closed' }] });
    });
  });

  describe('streaming', () => {
    it('streams a tool call (argument deltas, the call, its result) and the answer as a cold Observable', async () => {
      const agent = newAgent({ tools: [weather] });
      const thread = agent.getNewThread();
      const stream = agent.runStream('What is the weather in Lisbon?', { thread });
      expect(runsPosted()).to.have.length(0);
      const updates: AgentRunResponseUpdate[] = await lastValueFrom(stream.pipe(toArray()));

      const deltas = updates.filter((u) => u.toolCallDelta).map((u) => u.toolCallDelta!.argumentsDelta);
      expect(deltas.length).to.be.greaterThan(1);
      expect(deltas.join('')).to.equal('{"city":"Lisbon"}');
      const call = updates.flatMap((u) => u.contents).find((c) => c.kind === 'function-call');
      expect(call).to.deep.include({ name: 'get_weather', arguments: '{"city":"Lisbon"}' });
      expect(updates.find((u) => u.role === 'tool')?.contents[0]).to.deep.include({ kind: 'function-result', result: 'Sunny in Lisbon' });
      expect(updates.map((u) => u.text).join('')).to.equal('get_weather returned: Sunny in Lisbon');
      expect(updates.filter((u) => u.text).length).to.be.greaterThan(1);

      const streamed = running.emulator.requests.filter((r) => (r.body as { stream?: boolean } | undefined)?.stream === true);
      expect(streamed.map((r) => r.path.split('/').pop())).to.deep.equal(['runs', 'submit_tool_outputs']);
      expect(thread.serviceThreadId).to.match(/^thread_/);
      expect((await agent.run("What's my name?", { thread })).text).to.equal("I don't know your name yet.");
    });

    it('keeps memory across streamed turns', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      await lastValueFrom(agent.runStream('My name is Linus.', { thread }).pipe(toArray()));
      const updates = await lastValueFrom(agent.runStream("What's my name?", { thread }).pipe(toArray()));
      expect(updates.map((u) => u.text).join('')).to.equal('Your name is Linus.');
    });

    it('fails a streamed run that ends "failed" with FoundryRunError', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      const error = await expectRejection(lastValueFrom(agent.runStream('[run:failed] hi', { thread })), FoundryRunError, /ended "failed"/);
      expect((error as FoundryRunError).runStatus).to.equal('failed');
      expect(thread.serviceThreadId).to.equal(undefined);
    });

    it('cancels the remote run when the subscriber unsubscribes', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      let started!: () => void;
      const runStarted = new Promise<void>((resolve) => (started = resolve));
      const subscription = agent.runStream('[run:hold] My name is Ada.', { thread }).subscribe({
        next: (update) => {
          if (update.responseId) started();
        },
        error: () => {},
      });
      await runStarted;
      subscription.unsubscribe();
      await until(() => cancels().length === 1);
      const threadId = cancels()[0].path.split('/')[5];
      const runId = cancels()[0].path.split('/')[7];
      let run = await client.runs.get(threadId, runId);
      if (run.status === 'cancelling') run = await client.runs.get(threadId, runId);
      expect(run.status).to.equal('cancelled');
      expect(thread.serviceThreadId).to.equal(undefined);
    });
  });

  describe('terminal run statuses', () => {
    for (const status of ['failed', 'expired', 'cancelled'] as const) {
      it(`turns a run that ends "${status}" into FoundryRunError naming the run, thread unchanged`, async () => {
        const agent = newAgent();
        const thread = agent.getNewThread();
        await agent.run('My name is Ada.', { thread });
        const before = await thread.serialize();
        const error = await expectRejection(agent.run(`[run:${status}] hello`, { thread }), FoundryRunError, new RegExp(`run_2 on thread ${thread.serviceThreadId} ended "${status}"`));
        expect(error).to.deep.include({ runStatus: status, runId: 'run_2', threadId: thread.serviceThreadId, provider: 'azure-ai-agents' });
        if (status === 'failed') expect((error as FoundryRunError).code).to.equal('server_error');
        expect(await thread.serialize()).to.deep.equal(before);
        // The thread is usable again: the next turn works.
        expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
      });
    }

    it('returns the partial answer of an "incomplete" run', async () => {
      const agent = newAgent();
      const response = await agent.run('[run:incomplete] My name is Ada.');
      expect(response.text).to.equal('Nice to');
    });

    it('cancels a run that outlives runTimeoutMs and fails with FoundryRunTimeoutError', async () => {
      const agent = newAgent({ runTimeoutMs: 30 });
      const error = await expectRejection(agent.run('[run:hold] wait'), FoundryRunTimeoutError, /still "in_progress" after 30 ms; it was cancelled/);
      expect((error as FoundryRunTimeoutError).runStatus).to.equal('timeout');
      expect(cancels()).to.have.length(1);
      expect(cancels()[0].path).to.contain((error as FoundryRunTimeoutError).runId);
    });
  });

  describe('abort and active runs', () => {
    it('cancels the remote run when the caller aborts while it is polled', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      const controller = new AbortController();
      const pending = agent.run('[run:hold] hello', { thread, signal: controller.signal });
      await until(() => running.emulator.requests.some((r) => r.method === 'GET' && r.path.endsWith('/runs/run_2')));
      controller.abort();
      await expectRejection(pending, AbortError);
      expect(cancels().map((r) => r.path.split('/').pop())).to.deep.equal(['cancel']);
      expect(cancels()[0].path).to.contain('/runs/run_2/');
      expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
    });

    it('cancels the run waiting for tool outputs when the caller aborts during the tool', async () => {
      const controller = new AbortController();
      const slow = tool({
        name: 'get_weather',
        parameters: z.object({ city: z.string() }),
        execute: () => {
          controller.abort();
          return 'never submitted';
        },
      });
      const agent = newAgent({ tools: [slow] });
      const thread = agent.getNewThread();
      await expectRejection(agent.run('What is the weather in Paris?', { thread, signal: controller.signal }), AbortError);
      await until(() => cancels().length === 1);
      expect(running.emulator.requests.filter((r) => r.path.endsWith('/submit_tool_outputs'))).to.have.length(0);
      const [threadId, runId] = [cancels()[0].path.split('/')[5], cancels()[0].path.split('/')[7]];
      let run = await client.runs.get(threadId, runId);
      if (run.status === 'cancelling') run = await client.runs.get(threadId, runId);
      expect(run.status).to.equal('cancelled');
    });

    it('cancels an orphaned active run on the thread before starting the next one', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      const threadId = thread.serviceThreadId!;
      // Another client left a run going on the same thread.
      await client.messages.create(threadId, 'user', '[run:hold] anyone there?');
      const orphan = await client.runs.create(threadId, await agent.getFoundryAgentId());
      expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
      expect(cancels()[0].path).to.contain(`/runs/${orphan.id}/cancel`);
      expect((await client.runs.get(threadId, orphan.id)).status).to.equal('cancelled');
    });

    it('waits for an active run to finish with activeRun: "wait"', async () => {
      const agent = newAgent({ activeRun: 'wait' });
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      const threadId = thread.serviceThreadId!;
      await client.messages.create(threadId, 'user', 'My name is Bob.');
      const other = await client.runs.create(threadId, await agent.getFoundryAgentId());
      expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Bob.');
      expect(cancels()).to.have.length(0);
      expect((await client.runs.get(threadId, other.id)).status).to.equal('completed');
    });
  });

  describe('deleting', () => {
    it('deleteThread deletes the Foundry thread; the agent definition stays until deleted explicitly', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      await agent.run('hi', { thread });
      const threadId = thread.serviceThreadId!;
      const agentId = await agent.getFoundryAgentId();

      await agent.deleteThread(thread);
      await expectRejection(client.threads.get(threadId), Error, /No thread found/);
      expect((await client.getAgent(agentId)).id).to.equal(agentId);

      await agent.deleteAgentDefinition();
      await expectRejection(client.getAgent(agentId), Error, /No assistant found/);
    });

    it('deleting a thread that never ran does nothing remote', async () => {
      const agent = newAgent();
      await agent.deleteThread(agent.getNewThread());
      expect(running.emulator.requests.filter((r) => r.method === 'DELETE')).to.have.length(0);
    });
  });
});

async function expectRejection(promise: Promise<unknown>, type: abstract new (...args: never[]) => Error, message?: RegExp): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(type);
    if (message) expect((error as Error).message).to.match(message);
    return error as Error;
  }
  expect.fail(`expected a ${type.name}`);
}
