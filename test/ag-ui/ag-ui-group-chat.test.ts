import { expect } from 'chai';
import type { Container } from 'inversify';
import { AgentGroupChat, type AIAgent, agentToken, createContainer, messageText } from 'skein';
import { AgUiServer, agUiPlugin } from 'skein/ag-ui';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { texts, viaJson } from '../agent-chat/fixture.js';

describe('skein/ag-ui: an AgUiAgent in a Skein group chat (against AgUiServer)', () => {
  let emulator: Emulator;
  let server: AgUiServer;
  let url: string;
  let hosted: Container;

  const build = (): Container =>
    createContainer({
      plugins: [openaiPlugin({ apiKey: 'test-key', baseURL: emulator.openaiBaseURL, maxRetries: 0 }), agUiPlugin()],
      agents: {
        writer: { client: 'openai-chat', model: 'gpt-test' },
        remote: { client: 'ag-ui', url: `${url}/agents/hosted` },
      },
    });
  const get = (c: Container, name: string): AIAgent => c.get(agentToken(name));

  before(async () => {
    emulator = await Emulator.start();
    // The remote participant is a Chat Completions agent served over AG-UI by Skein.
    hosted = createContainer({ plugins: [openaiPlugin({ apiKey: 'x', baseURL: emulator.openaiBaseURL, maxRetries: 0 })], agents: { hosted: { client: 'openai-chat', model: 'gpt-hosted' } } });
    server = new AgUiServer({ agents: { hosted: get(hosted, 'hosted') }, logger: { warn: () => undefined, error: () => undefined } });
    url = await server.listen();
  });
  after(async () => {
    await server.close();
    await hosted.unbindAllAsync();
    await emulator.stop();
  });

  it('takes turns with a Chat Completions agent; the remote hears who said what; resumes from JSON and continues its thread', async () => {
    const container = build();
    const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', 'remote'] });
    expect(chat.channelKey(get(container, 'remote'))).to.equal(`ag-ui:${url}/agents/hosted#remote`);
    await chat.addChatMessage('Tell me about otters');
    const [w, r] = texts(await chat.invoke()) as [string, string];
    expect(w).to.equal('You said: "Tell me about otters" (I have seen 0 earlier messages.)');
    // The remote got the user's message and the writer's, in one run: it answers the last, having seen the first.
    expect(r).to.equal(`You said: "${w}" (I have seen 1 earlier messages.)`);
    const hostedCall = emulator.requests.filter((q) => q.method === 'POST' && (q.body as { model?: string } | undefined)?.model === 'gpt-hosted').at(-1)!.body as { messages: { role: string; name?: string; content: unknown }[] };
    expect(hostedCall.messages.filter((m) => m.role === 'user').map((m) => [m.name, m.content])).to.deep.equal([
      [undefined, 'Tell me about otters'],
      ['writer', w],
    ]);
    expect(texts(await chat.getChatMessages(get(container, 'remote')))).to.deep.equal(['Tell me about otters', w, r]);

    // A new process reads the chat back: the remote participant continues the same remote thread.
    const resumed = await AgentGroupChat.deserialize(viaJson(await chat.serialize()), { container: build() });
    await resumed.addChatMessage('what did we talk about');
    const remote = resumed.agents.find((a) => a.name === 'remote')!;
    const again = await resumed.invoke({ agent: remote });
    expect(messageText(again[0]!)).to.equal(`We talked about: "Tell me about otters"; "${w}"`);
  });
});
