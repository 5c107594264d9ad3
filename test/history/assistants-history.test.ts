import { expect } from 'chai';
import { agentToken, createContainer, messageText, type AIAgent, type ChatMessage } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';

const texts = (messages: readonly ChatMessage[]) => messages.map((m) => `${m.role}:${messageText(m)}`);

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

  async function names(a: AIAgent) {
    const thread = a.getNewThread();
    await a.run('My name is Ann.', { thread });
    await a.run('My name is Bob.', { thread });
    return thread;
  }

  it('getMessages reads every message of the assistant thread, oldest first, with paging', async () => {
    const a = agent();
    const thread = await names(a);
    const messages = await a.getMessages(thread);
    expect(texts(messages)).to.deep.equal(['user:My name is Ann.', `assistant:${messageText(messages[1]!)}`, 'user:My name is Bob.', `assistant:${messageText(messages[3]!)}`]);
    expect(texts(await a.getMessages(thread, { limit: 2, before: messages[2]!.messageId! }))).to.deep.equal(texts(messages.slice(0, 2)));
  });

  it('forks by seeding a new assistant thread up to the cut; the original is unchanged; the fork resumes in a new container and deletes alone', async () => {
    const a = agent();
    const thread = await names(a);
    const all = await a.getMessages(thread);
    const fork = await a.forkThread(thread, { at: 1 });
    expect(fork.serviceThreadId).to.match(/^thread_/).and.not.equal(thread.serviceThreadId);
    expect(texts(await a.getMessages(fork))).to.deep.equal(texts(all.slice(0, 2)));

    const other = agent();
    const resumed = await other.deserializeThread(JSON.parse(JSON.stringify(await fork.serialize())));
    expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Ann.');
    await other.deleteThread(resumed);
    expect(texts(await a.getMessages(thread))).to.deep.equal(texts(all));
    expect((await a.run("What's my name?", { thread })).text).to.equal('Your name is Bob.');
  });
});
