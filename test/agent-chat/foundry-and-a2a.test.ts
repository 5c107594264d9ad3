import { expect } from 'chai';
import type { Container } from 'inversify';
import { AgentGroupChat, type AIAgent, agentToken, ChatAgent, createContainer, messageText } from 'skein';
import { A2AServer, a2aPlugin } from 'skein/a2a';
import { azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { OpenAIChatClient, openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { bodies, texts, viaJson } from './fixture.js';

describe('AgentGroupChat with Foundry and A2A agents', () => {
  let emulator: Emulator;
  let server: A2AServer;

  const build = (): Container =>
    createContainer({
      plugins: [
        openaiPlugin({ apiKey: 'test-key', baseURL: emulator.openaiBaseURL, maxRetries: 0 }),
        azureAIAgentsPlugin({ ...emulatorConnection(emulator.url), pollIntervalMs: 5 }),
        a2aPlugin(),
      ],
      agents: {
        writer: { client: 'openai-chat', model: 'gpt-test' },
        foundry: { client: 'azure-ai-agents', model: 'gpt-test', instructions: 'You check facts.' },
        checker: { client: 'azure-ai-agents', model: 'gpt-test' },
        remote: { client: 'a2a', url: server.agentCardUrl! },
      },
    });
  const get = (c: Container, name: string): AIAgent => c.get(agentToken(name));

  beforeEach(async () => {
    emulator = await Emulator.start();
    // The remote A2A agent is a Chat Completions agent hosted by Skein.
    server = new A2AServer({
      agent: new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'x', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }), name: 'hosted' }),
    });
    await server.listen();
  });
  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  it('runs a Foundry agent and an A2A agent with a Chat Completions agent; each sees the others; resumes from JSON', async () => {
    const container = build();
    const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', 'foundry', 'remote'] });
    await chat.addChatMessage('Tell me about otters');
    const [w, f, r] = texts(await chat.invoke()) as [string, string, string];
    expect(w).to.equal('You said: "Tell me about otters" (I have seen 0 earlier messages.)');
    // Foundry thread messages have no author field: the writer's words name their author in the text.
    expect(f.startsWith(`You said: "[writer]: ${w}"`)).to.equal(true);
    // A2A takes one message per turn: what the others said arrives as one message, a line per speaker.
    expect(r).to.equal(`You said: "user: Tell me about otters\nwriter: ${w}\nfoundry: ${f}" (I have seen 0 earlier messages.)`);
    expect(texts(await chat.getChatMessages(get(container, 'foundry')))).to.deep.equal(['Tell me about otters', w, f, r]);

    const resumed = await AgentGroupChat.deserialize(viaJson(await chat.serialize()), { container: build() });
    await resumed.addChatMessage('what did we talk about');
    const again = await resumed.invoke({ agent: await resumedAgent(resumed, 'foundry') });
    expect(messageText(again[0]!)).to.equal(`We talked about: "Tell me about otters"; "[writer]: ${w}"; "[remote]: ${r}"`);
    const a2a = await resumed.invoke({ agent: await resumedAgent(resumed, 'remote') });
    // The remote continued its context after the resume: it remembers the first turn's message.
    expect(messageText(a2a[0]!)).to.match(/^We talked about: "user: Tell me about otters/);
    expect(bodies(emulator, '/v1/chat/completions').length).to.be.greaterThan(2);
  });

  it('reads a Foundry thread longer than one page of the service (every message, in order)', async () => {
    const container = build();
    const chat = AgentGroupChat.fromContainer(container, { agents: ['foundry'] });
    const said = Array.from({ length: 120 }, (_, i) => `note ${i + 1}`);
    for (const text of said) await chat.addChatMessage(text);
    const [reply] = texts(await chat.invoke({ agent: get(container, 'foundry') }));
    expect(texts(await chat.getChatMessages(get(container, 'foundry')))).to.deep.equal([...said, reply]);
  });

  it('shares one Foundry thread between two Foundry agents of the project, and reset deletes it', async () => {
    const container = build();
    const chat = AgentGroupChat.fromContainer(container, { agents: ['foundry', 'checker'] });
    expect(chat.channelKey(get(container, 'foundry'))).to.equal(chat.channelKey(get(container, 'checker')));
    await chat.addChatMessage('My name is Ada');
    const [a, b] = texts(await chat.invoke());
    expect(a).to.equal('Nice to meet you, Ada!');
    // Same thread: the checker's run saw the user's message and the other agent's reply.
    // Same thread: the other Foundry agent's reply is an assistant turn on it, so the user's words are still the last input.
    expect(b).to.equal('Nice to meet you, Ada!');
    expect(texts(await chat.getChatMessages(get(container, 'checker')))).to.deep.equal(['My name is Ada', a, b]);
    const json = (await chat.serialize()) as unknown as { channels: { thread: { serviceThreadId?: string } }[] };
    expect(json.channels).to.have.length(1);
    const threadId = json.channels[0]!.thread.serviceThreadId!;
    await chat.reset();
    const gone = emulator.requests.filter((r) => r.method === 'DELETE' && r.path.includes(threadId));
    expect(gone).to.have.length(1);
  });
});

async function resumedAgent(chat: AgentGroupChat, name: string): Promise<AIAgent> {
  return chat.agents.find((a) => a.name === name)!;
}
