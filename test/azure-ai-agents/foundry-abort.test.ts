import type { AgentsClient, ThreadRun } from '@azure/ai-agents';
import { expect } from 'chai';
import { AbortError } from 'skein';
import { AzureAIAgent, createEmulatorAgentsClient, RUN_TAG_METADATA_KEY } from 'skein/azure-ai-agents';
import { type Fault } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';
import { until } from '../support/async-expectations.js';

describe('Foundry: an abort while the run is being created cancels that run (real @azure/ai-agents client)', () => {
  let client: AgentsClient;

  const runsOf = async (threadId: string): Promise<ThreadRun[]> => {
    const runs: ThreadRun[] = [];
    for await (const run of client.runs.list(threadId, { order: 'asc' })) runs.push(run);
    return runs;
  };
  const cancels = () => running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/cancel'));
  /** The run as the service sees it once a pending cancel has settled. */
  const settledStatus = async (threadId: string, runId: string): Promise<string> => {
    let run = await client.runs.get(threadId, runId);
    if (run.status === 'cancelling') run = await client.runs.get(threadId, runId);
    return run.status;
  };

  /** An agent and a thread with one finished turn; `fault` applies to the next run's creation. */
  const threadWithFault = async (fault: Fault) => {
    const agent = new AzureAIAgent({ client, model: 'gpt-4o', pollIntervalMs: 1 });
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    const threadId = thread.serviceThreadId!;
    running.emulator.injectFault({ ...fault, method: 'POST', path: `/api/projects/emulated/threads/${threadId}/runs` });
    return { agent, thread, threadId };
  };

  const running = emulatorPerTest();
  beforeEach(() => {
    client = createEmulatorAgentsClient(running.emulator.url, { clientOptions: { retryOptions: { maxRetries: 0 } } });
  });

  it('run(): the service created the run, its reply is slow, the caller aborts -> the run ends cancelled', async () => {
    // The run is created on the emulator, then its reply is held back (a slow network).
    const { agent, thread, threadId } = await threadWithFault({ kind: 'latency', phase: 'reply', ms: 60_000 });
    const [first] = await runsOf(threadId);

    const controller = new AbortController();
    const pending = agent.run('Tell me a story.', { thread, signal: controller.signal });
    await until(async () => (await runsOf(threadId)).length === 2);
    controller.abort();
    try {
      await pending;
      expect.fail('expected an AbortError');
    } catch (error) {
      expect(error).to.be.instanceOf(AbortError);
    }
    // The cancel was sent before the call gave up.
    expect(cancels()).to.have.length(1);

    const [, orphan] = await runsOf(threadId);
    expect(orphan.metadata?.[RUN_TAG_METADATA_KEY]).to.be.a('string');
    expect(cancels()[0].path).to.contain(`/runs/${orphan.id}/cancel`);
    expect(await settledStatus(threadId, orphan.id)).to.equal('cancelled');
    // The earlier, finished run was left alone, and no answer of the aborted turn landed.
    expect((await client.runs.get(threadId, first.id)).status).to.equal('completed');
    const assistantReplies: string[] = [];
    for await (const m of client.messages.list(threadId, { order: 'asc' })) if (m.role === 'assistant') assistantReplies.push(m.id);
    expect(assistantReplies).to.have.length(1);
    // The conversation goes on.
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
  });

  it('runStream(): aborted before thread.run.created arrives -> the thread\'s new run ends cancelled', async () => {
    // The stream opens (the run exists on the service) but no event comes through.
    const { agent, thread, threadId } = await threadWithFault({ kind: 'stall-stream', afterEvents: 0 });

    const controller = new AbortController();
    const updates: unknown[] = [];
    const subscription = agent.runStream('Tell me a story.', { thread, signal: controller.signal }).subscribe({
      next: (u) => updates.push(u),
      error: () => {},
    });
    await until(async () => (await runsOf(threadId)).length === 2);
    controller.abort();
    await until(() => cancels().length === 1);
    subscription.unsubscribe();

    const [, orphan] = await runsOf(threadId);
    expect(cancels()[0].path).to.contain(`/runs/${orphan.id}/cancel`);
    expect(await settledStatus(threadId, orphan.id)).to.equal('cancelled');
    expect(updates.filter((u) => (u as { text?: string }).text)).to.deep.equal([]);
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
  });

  it('runStream(): unsubscribing in the same window cancels the run too', async () => {
    const { agent, thread, threadId } = await threadWithFault({ kind: 'stall-stream', afterEvents: 0 });

    const subscription = agent.runStream('Tell me a story.', { thread }).subscribe({ error: () => {} });
    await until(async () => (await runsOf(threadId)).length === 2);
    subscription.unsubscribe();
    await until(() => cancels().length === 1);
    const [, orphan] = await runsOf(threadId);
    expect(await settledStatus(threadId, orphan.id)).to.equal('cancelled');
  });
});
