import OpenAI, { toFile } from 'openai';
import { expect } from 'chai';
import { agentToken, createContainer, messageText, type AIAgent } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { expectSeededFork, texts, twoNames } from './history-fixtures.js';
import { useEmulator } from '../support/emulator.js';


describe('history: Assistants v2 threads (real openai SDK against the emulator)', () => {
  const emu = useEmulator();

  const agent = () =>
    createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { helper: { client: 'openai-assistants', model: 'gpt-test', instructions: 'Help.', polling: { intervalMs: 1 } } },
    }).get<AIAgent>(agentToken('helper'));

  /**
   * A thread with one completed turn and a second whose run stops at requires_action, started
   * with the plain SDK: its message is on the thread, its call is a run step.
   */
  const waitingTurn = async () => {
    const a = agent();
    const raw = new OpenAI({ apiKey: 'test', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 });
    const thread = a.getNewThread();
    await a.run('My name is Ann.', { thread });
    const threadId = thread.serviceThreadId!;
    const assistantId = (await raw.beta.threads.runs.list(threadId)).data[0]!.assistant_id;
    const waiting = await raw.beta.threads.runs.createAndPoll(threadId, {
      assistant_id: assistantId,
      additional_messages: [{ role: 'user', content: 'call delete_file {"path":"/tmp/a"}' }],
      tools: [{ type: 'function', function: { name: 'delete_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
    });
    expect(waiting.status).to.equal('requires_action');
    return { a, raw, thread, threadId, waiting };
  };

  it('getMessages reads every message of the assistant thread, oldest first, with paging', async () => {
    const a = agent();
    const thread = await twoNames(a, 'Ann', 'Bob');
    const messages = await a.getMessages(thread);
    expect(texts(messages)).to.deep.equal(['user:My name is Ann.', `assistant:${messageText(messages[1]!)}`, 'user:My name is Bob.', `assistant:${messageText(messages[3]!)}`]);
    expect(texts(await a.getMessages(thread, { limit: 2, before: messages[2]!.messageId! }))).to.deep.equal(texts(messages.slice(0, 2)));
  });

  it('reads past the first page (150 messages)', async () => {
    const a = agent();
    const raw = new OpenAI({ apiKey: 'test', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 });
    const seeded = Array.from({ length: 150 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: `message ${i}` }));
    const remote = await raw.beta.threads.create({ messages: seeded });
    const thread = await a.deserializeThread({ $type: 'service', version: 1, provider: 'openai-assistants', agent: 'helper', serviceThreadId: remote.id });
    expect((await a.getMessages(thread)).map(messageText)).to.deep.equal(seeded.map((m) => m.content));
  });

  it('a fork carries image files and attachments as the same file references', async () => {
    const a = agent();
    const raw = new OpenAI({ apiKey: 'test', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 });
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

  it('a fork of a thread whose run waits for tool outputs (as an approval waits) holds only its completed turns; the origin then completes that run', async () => {
    const { a, raw, thread, threadId, waiting } = await waitingTurn();
    const history = await a.getMessages(thread);
    expect(texts(history)[2]).to.equal('user:call delete_file {"path":"/tmp/a"}');
    const completed = texts(history.slice(0, 2));

    for (const at of [undefined, 1, 2]) {
      const fork = await a.forkThread(thread, at === undefined ? {} : { at });
      expect(texts(await a.getMessages(fork)), `fork at ${at ?? 'the end'}`).to.deep.equal(completed);
    }
    expect(texts(await a.getMessages(await a.forkThread(thread, { at: 0 })))).to.deep.equal(completed.slice(0, 1));
    const fork = await a.forkThread(thread);
    expect((await a.run("What's my name?", { thread: fork })).text).to.equal('Your name is Ann.');

    const call = waiting.required_action!.submit_tool_outputs.tool_calls[0]!;
    const done = await raw.beta.threads.runs.submitToolOutputsAndPoll(waiting.id, { thread_id: threadId, tool_outputs: [{ tool_call_id: call.id, output: 'deleted /tmp/a' }] });
    expect(done.status).to.equal('completed');
    const finished = await a.getMessages(thread);
    expect(finished).to.have.length(4);
    expect(texts(await a.getMessages(await a.forkThread(thread)))).to.deep.equal(texts(finished));
  });

  it('a fork of a thread whose last run was cancelled while waiting ends before that turn', async () => {
    const { a, raw, thread, threadId, waiting } = await waitingTurn();
    expect((await raw.beta.threads.runs.cancel(waiting.id, { thread_id: threadId })).status).to.be.oneOf(['cancelling', 'cancelled']);
    const history = await a.getMessages(thread);
    expect(history).to.have.length(3);
    expect(texts(await a.getMessages(await a.forkThread(thread)))).to.deep.equal(texts(history.slice(0, 2)));
  });

  it("a fork keeps the thread's other state (an app's, context providers') as a chat agent's fork does, and the assistant; not the origin's uploaded files", async () => {
    const a = agent();
    const thread = a.getNewThread();
    await a.run('My name is Ann.', { thread });
    thread.state = { ...thread.state, app: { theme: 'dark', notes: ['a'] }, 'ag-ui': { cart: 2 } };
    const own = thread.state.openaiAssistants as { assistantId?: string };
    const fork = await a.forkThread(thread);
    expect(fork.state.app).to.deep.equal({ theme: 'dark', notes: ['a'] });
    expect(fork.state['ag-ui']).to.deep.equal({ cart: 2 });
    expect((fork.state.openaiAssistants as { assistantId?: string }).assistantId).to.equal(own.assistantId);
    expect(fork.state.openaiAssistants).to.not.have.property('uploadedFileIds');
    // The fork's state is its own: changing it leaves the origin's.
    (fork.state.app as { theme: string }).theme = 'light';
    expect((thread.state.app as { theme: string }).theme).to.equal('dark');
    // It serializes and resumes with that state, and goes on.
    const resumed = await a.deserializeThread(await fork.serialize());
    expect(resumed.state.app).to.deep.equal({ theme: 'light', notes: ['a'] });
    expect(messageText((await a.run("What's my name?", { thread: resumed })).messages.at(-1)!)).to.contain('Ann');
  });

  it('forks by seeding a new service thread with the messages up to the cut; the original is unchanged; the fork resumes in a new container and deletes alone', () =>
    expectSeededFork(agent));
});
