import OpenAI, { toFile } from 'openai';
import { expect } from 'chai';
import { agentToken, createContainer, messageText, type AIAgent } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { expectSeededFork, texts, twoNames } from './history-fixtures.js';


describe('history: Assistants v2 threads (real openai SDK against the emulator)', () => {
  let emulator: Emulator;
  before(async () => {
    emulator = await Emulator.start();
  });
  after(() => emulator.stop());

  const agent = () =>
    createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { helper: { client: 'openai-assistants', model: 'gpt-test', instructions: 'Help.', polling: { intervalMs: 1 } } },
    }).get<AIAgent>(agentToken('helper'));

  it('getMessages reads every message of the assistant thread, oldest first, with paging', async () => {
    const a = agent();
    const thread = await twoNames(a, 'Ann', 'Bob');
    const messages = await a.getMessages(thread);
    expect(texts(messages)).to.deep.equal(['user:My name is Ann.', `assistant:${messageText(messages[1]!)}`, 'user:My name is Bob.', `assistant:${messageText(messages[3]!)}`]);
    expect(texts(await a.getMessages(thread, { limit: 2, before: messages[2]!.messageId! }))).to.deep.equal(texts(messages.slice(0, 2)));
  });

  it('reads past the first page (150 messages)', async () => {
    const a = agent();
    const raw = new OpenAI({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 });
    const seeded = Array.from({ length: 150 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: `message ${i}` }));
    const remote = await raw.beta.threads.create({ messages: seeded });
    const thread = await a.deserializeThread({ $type: 'service', version: 1, provider: 'openai-assistants', agent: 'helper', serviceThreadId: remote.id });
    expect((await a.getMessages(thread)).map(messageText)).to.deep.equal(seeded.map((m) => m.content));
  });

  it('a fork carries image files and attachments as the same file references', async () => {
    const a = agent();
    const raw = new OpenAI({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 });
    const image = await raw.files.create({ file: await toFile(Buffer.from('png'), 'cat.png'), purpose: 'vision' });
    const doc = await raw.files.create({ file: await toFile(Buffer.from('text'), 'notes.txt'), purpose: 'assistants' });
    const remote = await raw.beta.threads.create({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_file', image_file: { file_id: image.id } }], attachments: [{ file_id: doc.id, tools: [{ type: 'file_search' }] }] },
        { role: 'assistant', content: 'a cat' },
      ],
    });
    const thread = await a.deserializeThread({ $type: 'service', version: 1, provider: 'openai-assistants', agent: 'helper', serviceThreadId: remote.id });
    const fork = await a.forkThread(thread);
    const original = await raw.beta.threads.messages.list(remote.id, { order: 'asc' });
    const copied = await raw.beta.threads.messages.list(fork.serviceThreadId!, { order: 'asc' });
    expect(copied.data.map((m) => [m.role, m.content, m.attachments])).to.deep.equal(original.data.map((m) => [m.role, m.content, m.attachments]));
  });

  it('forks by seeding a new service thread with the messages up to the cut; the original is unchanged; the fork resumes in a new container and deletes alone', () =>
    expectSeededFork(agent));
});
