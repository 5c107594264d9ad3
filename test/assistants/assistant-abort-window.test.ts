import { expect } from 'chai';
import { lastValueFrom } from 'rxjs';
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortError } from 'skein';
import { OpenAIAssistantAgent } from 'skein/openai';
import type { Emulator } from 'skein/testing';
import { emulatorClientPerTest } from '../support/emulator.js';

describe('Assistants: an abort while the run is being created cancels that run on the service', () => {
  const suite = emulatorClientPerTest();
  let agent: OpenAIAssistantAgent;

  beforeEach(async () => {
    agent = await OpenAIAssistantAgent.create(suite.client, { model: 'gpt-test', name: 'slow' }, { polling: { intervalMs: 1 } });
  });

  /** A thread on the service whose next run-create call meets `fault`. */
  async function threadWithFaultyRunCreate(fault: Record<string, unknown>) {
    const thread = await agent.createThread();
    const threadId = thread.serviceThreadId!;
    suite.emulator.injectFault({ ...fault, method: 'POST', path: `/v1/threads/${threadId}/runs` } as Parameters<Emulator['injectFault']>[0]);
    return { thread, threadId };
  }

  /** Resolves once the service holds a run on the thread (the create call's answer is still on its way). */
  async function runCreatedOnService(threadId: string): Promise<string> {
    for (;;) {
      const [run] = (await suite.client.beta.threads.runs.list(threadId)).data;
      if (run) return run.id;
      await sleep(5);
    }
  }

  /** The run's status as the service reports it once it settled (a cancel passes through `cancelling`). */
  async function settledStatus(threadId: string, runId: string): Promise<string> {
    let run = await suite.client.beta.threads.runs.retrieve(runId, { thread_id: threadId });
    while (run.status === 'cancelling' || run.status === 'queued' || run.status === 'in_progress') run = await suite.client.beta.threads.runs.retrieve(runId, { thread_id: threadId });
    return run.status;
  }

  it('run: the create reply is slow, the caller aborts; the run is found and cancelled, the thread goes on', async () => {
    const { thread, threadId } = await threadWithFaultyRunCreate({ kind: 'latency', phase: 'reply', ms: 3_000 });
    const controller = new AbortController();
    const turn = agent.run('My name is Ada.', { thread, signal: controller.signal }).catch((e: unknown) => e);
    const runId = await runCreatedOnService(threadId);
    controller.abort();
    const error = await turn;
    expect(error).to.be.instanceOf(AbortError);
    expect((error as Error).message).to.contain(runId);
    expect(await settledStatus(threadId, runId)).to.equal('cancelled');
    // No answer landed unseen, and the thread takes the next turn.
    const messages = await agent.getThreadMessages(thread);
    expect(messages.map((m) => m.role)).to.deep.equal(['user']);
    const next = await agent.run("What's my name?", { thread });
    expect(next.text).to.equal('Your name is Ada.');
  });

  it('runStream: aborted before thread.run.created arrives; the run is found and cancelled', async () => {
    const { thread, threadId } = await threadWithFaultyRunCreate({ kind: 'stall-stream', afterEvents: 0 });
    const controller = new AbortController();
    const turn = lastValueFrom(agent.runStream('hello', { thread, signal: controller.signal })).catch((e: unknown) => e);
    const runId = await runCreatedOnService(threadId);
    controller.abort();
    expect(await turn).to.be.instanceOf(AbortError);
    expect(await settledStatus(threadId, runId)).to.equal('cancelled');
    const next = await agent.run('again', { thread });
    expect(next.text).to.contain('You said: "again"');
  });

  it('runStream unsubscribed before thread.run.created: the run is cancelled before the thread takes its next turn', async () => {
    const { thread, threadId } = await threadWithFaultyRunCreate({ kind: 'stall-stream', afterEvents: 0 });
    const subscription = agent.runStream('hello', { thread }).subscribe({ error: () => undefined });
    const runId = await runCreatedOnService(threadId);
    subscription.unsubscribe();
    // The next turn waits for the thread, which the aborted turn holds until its run is cancelled.
    const next = await agent.run('again', { thread });
    expect(next.text).to.contain('You said: "again"');
    expect(await settledStatus(threadId, runId)).to.equal('cancelled');
  });

  it('a lost connection while creating the run cancels the run too (no orphan answers the thread later)', async () => {
    const { thread, threadId } = await threadWithFaultyRunCreate({ kind: 'cut-stream', afterEvents: 0 });
    const error = await agent.run('hello', { thread }).catch((e: unknown) => e);
    expect((error as Error).name).to.equal('ConnectionError');
    const [run] = (await suite.client.beta.threads.runs.list(threadId)).data;
    expect(await settledStatus(threadId, run!.id)).to.equal('cancelled');
    expect((await agent.getThreadMessages(thread)).map((m) => m.role)).to.deep.equal(['user']);
  });
});
