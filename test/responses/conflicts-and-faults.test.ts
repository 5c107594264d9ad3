import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import {
  type AgentConfig,
  type AIAgent,
  agentToken,
  ConfigurationError,
  ConnectionError,
  createContainer,
  RateLimitError,
  ServiceError,
  ThreadCompatibilityError,
} from 'skein';
import { openaiPlugin } from 'skein/openai';
import { type Emulator } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';
import { agentFor, responseBodies, viaJson } from './fixture.js';

describe('Responses: thread conflicts', () => {
  const running = emulatorPerTest();

  it('a message-store thread given to a service-managed agent', async () => {
    const storeThread = agentFor(running.emulator, { store: false }).getNewThread();
    const serviceAgent = agentFor(running.emulator); // same agent name, now configured with store: true
    const error = await serviceAgent.run('hi', { thread: storeThread }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ThreadCompatibilityError);
    expect((error as Error).message).to.match(/Expected a service thread.*found a thread with a "in-memory" message store/);
    const serialized = viaJson(await storeThread.serialize());
    const fromJson = await serviceAgent.deserializeThread(serialized).catch((e: unknown) => e);
    expect(fromJson).to.be.instanceOf(ThreadCompatibilityError);
    expect(running.emulator.requestsTo('/v1/responses')).to.have.length(0);
  });

  it('a service thread given to a store: false agent', async () => {
    const serviceAgent = agentFor(running.emulator);
    const thread = serviceAgent.getNewThread();
    await serviceAgent.run('My name is Ada.', { thread });
    const storeAgent = agentFor(running.emulator, { store: false });
    const error = await storeAgent.run('hi', { thread }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ThreadCompatibilityError);
    expect((error as Error).message).to.match(/Expected a message-store thread.*found a service thread with id "resp_1"/);
  });

  it('a resp_ thread given to a Chat Completions agent', async () => {
    const thread = agentFor(running.emulator).getNewThread();
    await agentFor(running.emulator).run('hi', { thread });
    const chat = chatAgent(running.emulator);
    const wrongProvider = await chat.run('hi', { thread }).catch((e: unknown) => e);
    expect(wrongProvider).to.be.instanceOf(ThreadCompatibilityError);
    expect((wrongProvider as Error).message).to.match(/Expected a thread of provider "openai-chat", found a thread made by openai-responses/);

    // Even when the JSON claims to be a Chat Completions thread, a service id is refused.
    const forged = { $type: 'service', version: 1, provider: 'openai-chat', agent: 'assistant', serviceThreadId: 'resp_1' };
    const wrongKind = await chat.deserializeThread(forged).catch((e: unknown) => e);
    expect(wrongKind).to.be.instanceOf(ThreadCompatibilityError);
    expect((wrongKind as Error).message).to.match(/Expected a message-store thread.*found a service thread with id "resp_1"/);
  });

  it('a thread from another provider', async () => {
    const chat = chatAgent(running.emulator);
    const thread = chat.getNewThread();
    await chat.run('hi', { thread });
    for (const agent of [agentFor(running.emulator), agentFor(running.emulator, { store: false })]) {
      const error = await agent.run('hi', { thread }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ThreadCompatibilityError);
      expect((error as Error).message).to.match(/Expected a thread of provider "openai-responses", found a thread made by openai-chat/);
    }
  });

  it('store: false for one run of a service thread is a configuration error, nothing sent', async () => {
    const agent = agentFor(running.emulator);
    const thread = agent.getNewThread();
    await agent.run('hi', { thread });
    const error = await agent.run('again', { thread, chatOptions: { additionalProperties: { store: false } } }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigurationError);
    expect(responseBodies(running.emulator)).to.have.length(1);
  });

  it('a non-boolean store option is a configuration error', async () => {
    const error = await agentFor(running.emulator, { store: 'no' }).run('hi').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.contain('"store" option must be true or false');
  });

  it('a service id returned to a store thread is ignored: the store stays the history', async () => {
    const agent = agentFor(running.emulator, { store: false });
    const thread = agent.getNewThread();
    // store: true for one run makes the service store it and return an id the thread cannot adopt.
    const reply = await agent.run('My name is Ada.', { thread, chatOptions: { additionalProperties: { store: true } } });
    expect(reply.details.conversationId).to.equal(reply.responseId);
    expect(thread.serviceThreadId).to.equal(undefined);
    expect(await thread.messageStore!.listMessages()).to.have.length(2);
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
  });
});

describe('Responses: faults leave the thread unchanged', () => {
  const running = emulatorPerTest();

  const kinds: [string, Partial<AgentConfig>][] = [
    ['previous_response_id', {}],
    ['conversation', { conversation: true }],
    ['store: false', { store: false }],
  ];
  const faults = [
    { name: '429', fault: { kind: 'status', status: 429 } as const, streaming: false, error: RateLimitError },
    { name: '500', fault: { kind: 'status', status: 500 } as const, streaming: false, error: ServiceError },
    { name: 'cut stream', fault: { kind: 'cut-stream', afterEvents: 4 } as const, streaming: true, error: ConnectionError },
  ];

  for (const [kind, config] of kinds) {
    for (const { name, fault, streaming, error: errorType } of faults) {
      it(`${kind}: ${name}`, async () => {
        const agent = agentFor(running.emulator, config);
        const thread = agent.getNewThread();
        await agent.run('My name is Ada.', { thread });
        const before = viaJson(await thread.serialize());

        running.emulator.injectFault({ ...fault, path: '/v1/responses' });
        const run = streaming
          ? lastValueFrom(agent.runStream('My name is Bob.', { thread }).pipe(toArray()))
          : agent.run('My name is Bob.', { thread });
        const error = await run.catch((e: unknown) => e);
        expect(error).to.be.instanceOf(errorType);
        expect(viaJson(await thread.serialize())).to.deep.equal(before);

        const after = await agent.run("What's my name?", { thread });
        // The failed turn is not part of the thread's history (a conversation keeps what the
        // service stored before the cut: see docs/responses.md).
        if (!(kind === 'conversation' && streaming)) expect(after.text).to.equal('Your name is Ada.');
      });
    }
  }
});

function chatAgent(emulator: Emulator): AIAgent {
  const container = createContainer({
    plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 })],
    agents: { assistant: { client: 'openai-chat', model: 'gpt-test' } },
  });
  return container.get<AIAgent>(agentToken('assistant'));
}
