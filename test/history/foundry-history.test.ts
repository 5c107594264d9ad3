import { expect } from 'chai';
import { agentToken, createContainer, messageText, type AIAgent, type ChatMessage } from 'skein';
import { azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { Emulator } from 'skein/testing';

const texts = (messages: readonly ChatMessage[]) => messages.map((m) => `${m.role}:${messageText(m)}`);

describe('history: Foundry Agents threads (real @azure/ai-agents SDK against the emulator)', () => {
  let emulator: Emulator;
  before(async () => {
    emulator = await Emulator.start();
  });
  after(() => emulator.stop());

  const agent = () =>
    createContainer({
      plugins: [azureAIAgentsPlugin({ ...emulatorConnection(emulator.url, { token: 'foundry-token' }), pollIntervalMs: 1 })],
      agents: { support: { client: 'azure-ai-agents', model: 'gpt-4o', instructions: 'You are support.' } },
    }).get<AIAgent>(agentToken('support'));

  it('getMessages reads every message of the service thread, oldest first', async () => {
    const a = agent();
    const thread = a.getNewThread();
    await a.run('My name is Grace.', { thread });
    await a.run('My name is Ida.', { thread });
    const messages = await a.getMessages(thread);
    expect(texts(messages)).to.deep.equal(['user:My name is Grace.', `assistant:${messageText(messages[1]!)}`, 'user:My name is Ida.', `assistant:${messageText(messages[3]!)}`]);
    expect(messages.every((m) => typeof m.messageId === 'string')).to.equal(true);
    expect(texts(await a.getMessages(thread, { limit: 1 }))).to.deep.equal(texts(messages.slice(3)));
  });

  it('forks by seeding a new service thread with the messages up to the cut; the original is unchanged; the fork resumes elsewhere and deletes alone', async () => {
    const a = agent();
    const thread = a.getNewThread();
    await a.run('My name is Grace.', { thread });
    await a.run('My name is Ida.', { thread });
    const all = await a.getMessages(thread);
    const fork = await a.forkThread(thread, { at: 1 });
    expect(fork.serviceThreadId).to.match(/^thread_/).and.not.equal(thread.serviceThreadId);
    expect(texts(await a.getMessages(fork))).to.deep.equal(texts(all.slice(0, 2)));

    const other = agent();
    const resumed = await other.deserializeThread(JSON.parse(JSON.stringify(await fork.serialize())));
    expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Grace.');
    await other.deleteThread(resumed);
    expect(texts(await a.getMessages(thread))).to.deep.equal(texts(all));
    expect((await a.run("What's my name?", { thread })).text).to.equal('Your name is Ida.');
  });
});
