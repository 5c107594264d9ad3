import { expect } from 'chai';
import { agentToken, approvalResponse, createContainer, messageText, tool, type AIAgent, type ChatAgent } from 'skein';
import { z } from 'zod';
import { type AzureAIAgentsChatClient, azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { expectSeededFork, texts, twoNames } from './history-fixtures.js';
import { deleteFileTool } from '../support/example-tools.js';
import { useEmulator } from '../support/emulator.js';


describe('history: Foundry Agents threads (real @azure/ai-agents SDK against the emulator)', () => {
  const emu = useEmulator();

  const agent = () =>
    createContainer({
      plugins: [azureAIAgentsPlugin({ ...emulatorConnection(emu.url, { token: 'foundry-token' }), pollIntervalMs: 1 })],
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

  it('a fork of a thread waiting for an approval holds only its completed turns, at the end and at every index; the origin then completes its approval', async () => {
    const a = agent();
    const deleted: string[] = [];
    const tools = [deleteFileTool(deleted)];
    const thread = a.getNewThread();
    await a.run('My name is Grace.', { thread, tools });
    const asked = await a.run('call delete_file {"path":"/tmp/a"}', { thread, tools });
    expect(asked.approvalRequests).to.have.length(1);
    // The waiting turn's message is on the service thread (its call is a run step, not a message).
    const waiting = await a.getMessages(thread);
    expect(texts(waiting)).to.have.length(3);
    expect(texts(waiting)[2]).to.equal('user:call delete_file {"path":"/tmp/a"}');
    const completed = texts(waiting.slice(0, 2));

    for (const at of [undefined, 1, 2]) {
      const fork = await a.forkThread(thread, at === undefined ? {} : { at });
      expect(texts(await a.getMessages(fork)), `fork at ${at ?? 'the end'}`).to.deep.equal(completed);
    }
    const early = await a.forkThread(thread, { at: 0 });
    expect(texts(await a.getMessages(early))).to.deep.equal(completed.slice(0, 1));
    // A fork goes on from its last completed turn.
    const fork = await a.forkThread(thread);
    expect((await a.run("What's my name?", { thread: fork, tools })).text).to.equal('Your name is Grace.');

    const approved = await a.run(approvalResponse(asked.approvalRequests[0]!, true), { thread, tools });
    expect(deleted).to.deep.equal(['/tmp/a']);
    expect(approved.text).to.equal('delete_file returned: deleted /tmp/a');
    const finished = await a.getMessages(thread);
    expect(texts(finished)).to.deep.equal([...texts(waiting), 'assistant:delete_file returned: deleted /tmp/a']);
    // Now the turn is complete, a fork holds it.
    expect(texts(await a.getMessages(await a.forkThread(thread)))).to.deep.equal(texts(finished));
  });

  it('a fork of a thread holding results for a pending approval holds neither: answered and continued, nothing of the origin’s held results reaches the fork’s service thread', async () => {
    const a = agent();
    const deleted: string[] = [];
    const weatherCalls: string[] = [];
    const weather = tool({ name: 'get_weather', description: 'Weather', parameters: z.object({ city: z.string() }), execute: ({ city }) => (weatherCalls.push(city), `Sunny in ${city}`) });
    const tools = [deleteFileTool(deleted), weather];
    const thread = a.getNewThread();
    await a.run('My name is Grace.', { thread, tools });
    // get_weather needs no approval: it runs now and its result is held until the answer.
    const asked = await a.run('call get_weather {"city":"Oslo"} and call delete_file {"path":"/tmp/a"}', { thread, tools });
    expect(asked.approvalRequests).to.have.length(1);
    expect(Object.keys((await thread.serialize()).state ?? {})).to.include.members(['pendingApprovals', 'heldToolResults']);

    const fork = await a.forkThread(thread);
    const serialized = await fork.serialize();
    expect(serialized.state ?? {}).to.not.have.any.keys('pendingApprovals', 'heldToolResults');
    const resumed = await a.deserializeThread(JSON.parse(JSON.stringify(serialized)));
    const again = await a.run('call delete_file {"path":"/tmp/f"}', { thread: resumed, tools });
    const answered = await a.run(approvalResponse(again.approvalRequests[0]!, true), { thread: resumed, tools });
    expect(answered.text).to.equal('delete_file returned: deleted /tmp/f');
    expect(deleted).to.deep.equal(['/tmp/f']);
    expect(weatherCalls).to.deep.equal(['Oslo']);
    const forkSaid = (await a.getMessages(resumed)).map((m) => JSON.stringify(m.contents)).join('\n');
    expect(forkSaid).to.not.contain('Oslo');

    // The origin still sends both results with its own answer.
    const approved = await a.run(approvalResponse(asked.approvalRequests[0]!, true), { thread, tools });
    expect(approved.text).to.equal('get_weather returned: Sunny in Oslo\ndelete_file returned: deleted /tmp/a');
  });

  it('forks by seeding a new service thread with the messages up to the cut; the original is unchanged; the fork resumes in a new container and deletes alone', () =>
    expectSeededFork(agent));
});
