import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { AgentGroupChat, ChatAgent, createContainer, readAttribution, textMessage } from 'skein';
import { azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { OpenAIResponsesClient, openaiPlugin, participantName } from 'skein/openai';
import { RESPONSES_INPUT_ITEMS_LISTINGS } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';
import { agent, bodies, containerFor, texts } from './fixture.js';

/**
 * Issue 16 item 15: another agent's words reach a model as a user message that says who wrote
 * them: `name` on Chat Completions messages, a `[name]: ` attribution in Responses input. Checked
 * on what the emulator received through the official `openai` SDK.
 */
// Both ways a server lists a continuing response's input_items (the Responses agent's history is read from them).
for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS) describe(`AgentGroupChat: each model is told who spoke (Responses input_items: ${listing})`, () => {
  const running = emulatorPerTest({ responsesInputItems: listing });

  const AGENTS = { writer: { client: 'openai-chat', model: 'gpt-test' }, reviewer: { client: 'openai-responses', model: 'gpt-test' } };
  const responsesAgent = (name: string, store = true) =>
    new ChatAgent({ chatClient: new OpenAIResponsesClient({ apiKey: 'k', baseURL: running.emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test', store }), name });

  type WireMessage = { role: string; content: unknown; name?: string };
  type WireItem = { type?: string; role: string; content: unknown };

  it('sends another agent\'s reply to Chat Completions with its author as `name`, sanitised to what the API accepts', async () => {
    const chat = AgentGroupChat.fromContainer(containerFor(running.emulator, AGENTS), { agents: [responsesAgent('Data Analyst'), 'writer'] });
    await chat.addChatMessage('My name is Ada');
    const [fromAnalyst, fromWriter] = await chat.invoke();

    const sent = bodies(running.emulator, '/v1/chat/completions').at(-1)!.messages as WireMessage[];
    expect(sent).to.deep.equal([
      { role: 'user', content: 'My name is Ada' }, // the human: no name
      { role: 'user', content: texts([fromAnalyst!])[0], name: 'Data_Analyst' },
    ]);
    expect(fromWriter!.authorName).to.equal('writer');

    // Streamed the same way; the writer's own earlier reply stays an (unnamed) assistant turn.
    await chat.addChatMessage(textMessage('user', 'what did we talk about', 'Ada Lovelace'));
    await lastValueFrom(chat.invokeStream().pipe(toArray()));
    const streamed = bodies(running.emulator, '/v1/chat/completions').at(-1)!;
    expect(streamed.stream).to.equal(true);
    expect((streamed.messages as WireMessage[]).map((m) => [m.role, m.name])).to.deep.equal([
      ['user', undefined],
      ['user', 'Data_Analyst'],
      ['assistant', undefined],
      ['user', 'Ada_Lovelace'],
      ['user', 'Data_Analyst'],
    ]);
    // The chat itself keeps the names as they were given.
    expect((await chat.getChatMessages()).map((m) => m.authorName)).to.deep.equal([undefined, 'Data Analyst', 'writer', 'Ada Lovelace', 'Data Analyst', 'writer']);
  });

  it('attributes another agent\'s reply in Responses input as "[name]: text", and reads the author back from the stored history', async () => {
    const container = containerFor(running.emulator, AGENTS);
    const reviewer = agent(container, 'reviewer');
    const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', reviewer] });
    await chat.addChatMessage('Tell me about otters');
    const [fromWriter, fromReviewer] = await chat.invoke();
    const w = texts([fromWriter!])[0]!;

    const input = bodies(running.emulator, '/v1/responses').at(-1)!.input as WireItem[];
    expect(input.map((i) => [i.role, i.content])).to.deep.equal([
      ['user', 'Tell me about otters'],
      ['user', `[writer]: ${w}`],
    ]);
    // The model could tell the two apart.
    expect(texts([fromReviewer!])[0]).to.equal(`You said: "[writer]: ${w}" (I have seen 1 earlier messages.)`);

    // Read back from the service (the stored response chain), the author is a field again.
    const history = await chat.getChatMessages(reviewer);
    expect(history.map((m) => [m.role, m.authorName, texts([m])[0]])).to.deep.equal([
      ['user', undefined, 'Tell me about otters'],
      ['user', 'writer', w],
      ['assistant', undefined, texts([fromReviewer!])[0]], // a stored reply does not say which agent made it
    ]);
  });

  it('names the author in the text of Assistants and Foundry thread messages too, and reads it back as authorName', async () => {
    const container = createContainer({
      plugins: [
        openaiPlugin({ apiKey: 'test-key', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 }),
        azureAIAgentsPlugin({ ...emulatorConnection(running.emulator.url), pollIntervalMs: 5 }),
      ],
      agents: {
        writer: { client: 'openai-chat', model: 'gpt-test' },
        assistant: { client: 'openai-assistants', model: 'gpt-test', polling: { intervalMs: 5 } },
        foundry: { client: 'azure-ai-agents', model: 'gpt-test' },
      },
    });
    const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', 'assistant', 'foundry'] });
    await chat.addChatMessage('Tell me about otters');
    const [w, a] = texts(await chat.invoke()) as [string, string, string];
    const runs = running.emulator.requests.filter((r) => r.method === 'POST' && /\/threads\/[^/]+\/runs$/.test(r.path));
    const sent = runs.map((r) => ((r.body as { additional_messages: WireItem[] }).additional_messages ?? []).map((m) => [m.role, m.content]));
    expect(sent).to.deep.equal([
      [['user', 'Tell me about otters'], ['user', `[writer]: ${w}`]], // Assistants
      [['user', 'Tell me about otters'], ['user', `[writer]: ${w}`], ['user', `[assistant]: ${a}`]], // Foundry
    ]);
    const onAssistantThread = await chat.getChatMessages(agent(container, 'assistant'));
    expect(onAssistantThread.slice(0, 2).map((m) => [m.authorName, texts([m])[0]])).to.deep.equal([
      [undefined, 'Tell me about otters'],
      ['writer', w],
    ]);
  });

  it('attributes named messages in Responses input without a stored chain too (store: false)', async () => {
    const agent = responsesAgent('reviewer', false);
    const thread = agent.getNewThread();
    await agent.run([textMessage('user', 'Hi all', 'Ada'), textMessage('user', 'Hello', 'Data Analyst')], { thread });
    const input = bodies(running.emulator, '/v1/responses').at(-1)!.input as WireItem[];
    expect(input.map((i) => i.content)).to.deep.equal(['[Ada]: Hi all', '[Data Analyst]: Hello']);
  });

  it('sanitises author names to ^[a-zA-Z0-9_-]{1,64}$ and leaves out a name with nothing left', () => {
    expect(participantName('writer')).to.equal('writer');
    expect(participantName('Data Analyst')).to.equal('Data_Analyst');
    expect(participantName('José-María')).to.equal('Jose-Maria');
    expect(participantName(' a/b <c> ')).to.equal('a_b_c_');
    expect(participantName('x'.repeat(80))).to.equal('x'.repeat(64));
    expect(participantName('数据')).to.equal(undefined);
    expect(participantName('')).to.equal(undefined);
    expect(participantName(undefined)).to.equal(undefined);
    for (const name of ['writer', 'Data Analyst', 'José-María', ' a/b <c> ', 'x'.repeat(80)]) expect(participantName(name)).to.match(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(readAttribution('[writer]: hi')).to.deep.equal({ authorName: 'writer', text: 'hi' });
    expect(readAttribution('no author here')).to.deep.equal({ text: 'no author here' });
  });
});
