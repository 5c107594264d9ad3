import { expect } from 'chai';
import { agentToken, createContainer, messageText, type AIAgent, type ChatAgent } from 'skein';
import { type AzureAIAgentsChatClient, azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { Emulator } from 'skein/testing';
import { expectSeededFork, texts, twoNames } from './history-fixtures.js';


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
    const thread = await twoNames(a, 'Grace', 'Ida');
    const messages = await a.getMessages(thread);
    expect(texts(messages)).to.deep.equal(['user:My name is Grace.', `assistant:${messageText(messages[1]!)}`, 'user:My name is Ida.', `assistant:${messageText(messages[3]!)}`]);
    expect(messages.every((m) => typeof m.messageId === 'string')).to.equal(true);
    expect(texts(await a.getMessages(thread, { limit: 1 }))).to.deep.equal(texts(messages.slice(3)));
  });

  it('reads past the first page (150 messages) and forks a long thread in one seeded thread', async () => {
    const a = agent() as ChatAgent;
    const client = (a.chatClient as AzureAIAgentsChatClient).client;
    const seeded = Array.from({ length: 150 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: `message ${i}` }));
    const remote = await client.threads.create({ messages: seeded });
    const thread = await a.deserializeThread({ $type: 'service', version: 1, provider: 'azure-ai-agents', agent: 'support', serviceThreadId: remote.id });
    const messages = await a.getMessages(thread);
    expect(messages.map(messageText)).to.deep.equal(seeded.map((m) => m.content));
    const fork = await a.forkThread(thread, { at: 120 });
    expect((await a.getMessages(fork)).map(messageText)).to.deep.equal(seeded.slice(0, 121).map((m) => m.content));
  });

  it('a fork carries image files and attachments as the same file references', async () => {
    const a = agent() as ChatAgent;
    const client = (a.chatClient as AzureAIAgentsChatClient).client;
    const remote = await client.threads.create({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_file', imageFile: { fileId: 'assistant-img1' } }], attachments: [{ fileId: 'assistant-doc1', tools: [{ type: 'file_search' }] }] },
        { role: 'assistant', content: 'a cat' },
      ],
    });
    const thread = await a.deserializeThread({ $type: 'service', version: 1, provider: 'azure-ai-agents', agent: 'support', serviceThreadId: remote.id });
    const [first] = await a.getMessages(thread);
    expect(first!.contents).to.deep.equal([
      { kind: 'text', text: 'look' },
      { kind: 'uri', uri: 'foundry-file:assistant-img1', mediaType: 'image/*' },
      { kind: 'uri', uri: 'foundry-file:assistant-doc1', additionalProperties: { tools: ['file_search'] } },
    ]);
    const fork = await a.forkThread(thread);
    expect((await a.getMessages(fork)).map((m) => m.contents)).to.deep.equal((await a.getMessages(thread)).map((m) => m.contents));
  });

  it('forks by seeding a new service thread with the messages up to the cut; the original is unchanged; the fork resumes in a new container and deletes alone', () =>
    expectSeededFork(agent));
});
