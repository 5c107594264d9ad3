import type { AgentsClient, ThreadMessage } from '@azure/ai-agents';
import { expect } from 'chai';
import { lastValueFrom } from 'rxjs';
import type { ChatMessage } from 'skein';
import { AzureAIAgent, createEmulatorAgentsClient, FoundryInputError } from 'skein/azure-ai-agents';
import { emulatorPerTest } from '../support/emulator.js';
import { rejection } from '../support/async-expectations.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
const PDF = Buffer.from('%PDF-1.7 a contract').toString('base64');

describe('Foundry input: every content kind is sent as Foundry content or refused before any request', () => {
  let client: AgentsClient;

  const runRequests = () => running.emulator.requests.filter((r) => r.method === 'POST' && /\/threads\/[^/]+\/runs$/.test(r.path));
  const sentMessages = () => (runRequests().at(-1)!.body as { additional_messages: { role: string; content: unknown; attachments?: unknown }[] }).additional_messages;
  const threadMessages = async (threadId: string): Promise<ThreadMessage[]> => {
    const out: ThreadMessage[] = [];
    for await (const m of client.messages.list(threadId, { order: 'asc' })) out.push(m);
    return out;
  };
  const user = (...contents: ChatMessage['contents']): ChatMessage => ({ role: 'user', contents });
  const newAgent = (options: Partial<ConstructorParameters<typeof AzureAIAgent>[0]> = {}) =>
    new AzureAIAgent({ client, model: 'gpt-4o', name: 'vision', instructions: 'Describe.', pollIntervalMs: 1, ...options } as ConstructorParameters<typeof AzureAIAgent>[0]);

  const running = emulatorPerTest();
  beforeEach(() => {
    client = createEmulatorAgentsClient(running.emulator.url, { clientOptions: { retryOptions: { maxRetries: 0 } } });
  });

  it('text, an image URL and image bytes reach the Foundry thread as text and image_url blocks', async () => {
    const agent = newAgent();
    const thread = agent.getNewThread();
    await agent.run(
      user(
        { kind: 'text', text: 'What is in these?' },
        { kind: 'uri', uri: 'https://example.com/cat.png', mediaType: 'image/png' },
        { kind: 'data', data: PNG, mediaType: 'image/png' },
      ),
      { thread },
    );
    expect(sentMessages()).to.deep.equal([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ]);
    const [stored] = await threadMessages(thread.serviceThreadId!);
    expect(stored.content.map((c) => c.type)).to.deep.equal(['text', 'image_url', 'image_url']);
  });

  it('a file on the project: an image becomes an image_file block, another file an attachment for the agent\'s file tools', async () => {
    const agent = newAgent({ foundryTools: [{ type: 'file_search' }] });
    const thread = agent.getNewThread();
    await agent.run(
      user(
        { kind: 'text', text: 'Compare the chart with the contract.' },
        { kind: 'uri', uri: 'foundry-file:assistant-chart', mediaType: 'image/png' },
        { kind: 'uri', uri: 'foundry-file:assistant-contract', mediaType: 'application/pdf' },
      ),
      { thread },
    );
    const [sent] = sentMessages();
    expect(sent.content).to.deep.equal([
      { type: 'text', text: 'Compare the chart with the contract.' },
      { type: 'image_file', image_file: { file_id: 'assistant-chart' } },
    ]);
    expect(sent.attachments).to.deep.equal([{ file_id: 'assistant-contract', tools: [{ type: 'file_search' }] }]);
    const [stored] = await threadMessages(thread.serviceThreadId!);
    expect(stored.content.map((c) => c.type)).to.deep.equal(['text', 'image_file']);
    expect(stored.attachments?.map((a) => ({ fileId: a.fileId, tools: a.tools }))).to.deep.equal([{ fileId: 'assistant-contract', tools: [{ type: 'file_search' }] }]);
  });

  it('structured data (JSON) and text bytes are sent as text the model reads, not dropped', async () => {
    const agent = newAgent();
    await agent.run(
      user(
        { kind: 'text', text: 'Summarize the order: ' },
        { kind: 'data', data: Buffer.from('{"order":42,"items":["tea"]}').toString('base64'), mediaType: 'application/json' },
        { kind: 'data', data: Buffer.from('note: urgent').toString('base64'), mediaType: 'text/plain' },
      ),
    );
    expect(sentMessages()).to.deep.equal([{ role: 'user', content: 'Summarize the order: {"order":42,"items":["tea"]}note: urgent' }]);
  });

  it('PDF bytes are refused with FoundryInputError before any request, and the thread is unchanged', async () => {
    const agent = newAgent();
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    const before = running.emulator.requests.length;
    const saved = JSON.stringify(await thread.serialize());

    const error = await rejection(agent.run(user({ kind: 'text', text: 'Read this' }, { kind: 'data', data: PDF, mediaType: 'application/pdf' }), { thread }));
    expect(error).to.be.instanceOf(FoundryInputError);
    expect(error.message).to.contain('messages[0].contents[1] (data)');
    expect(error.message).to.contain('application/pdf');
    expect(error.message).to.contain('foundry-file:<file id>');
    expect((error as FoundryInputError).mediaType).to.equal('application/pdf');
    expect(running.emulator.requests.length).to.equal(before);
    expect(JSON.stringify(await thread.serialize())).to.equal(saved);
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
  });

  it('a non-image URL, an image type Foundry cannot read, and a non-http URL are refused before any request (run and runStream)', async () => {
    const agent = newAgent();
    const cases: ChatMessage['contents'][number][] = [
      { kind: 'uri', uri: 'https://example.com/contract.pdf', mediaType: 'application/pdf' },
      { kind: 'data', data: PNG, mediaType: 'image/tiff' },
      { kind: 'uri', uri: 'file:///home/ada/cat.png' },
    ];
    for (const content of cases) {
      expect(await rejection(agent.run(user({ kind: 'text', text: 'look' }, content)))).to.be.instanceOf(FoundryInputError);
      expect(await rejection(lastValueFrom(agent.runStream(user({ kind: 'text', text: 'look' }, content))))).to.be.instanceOf(FoundryInputError);
    }
    expect(running.emulator.requests).to.have.length(0);
  });

  it('a file attachment for an agent without file_search or code_interpreter is refused before the thread or run is created', async () => {
    const agent = newAgent();
    const error = await rejection(agent.run(user({ kind: 'text', text: 'Read it' }, { kind: 'uri', uri: 'foundry-file:assistant-contract', mediaType: 'application/pdf' })));
    expect(error).to.be.instanceOf(FoundryInputError);
    expect(error.message).to.contain('neither file_search nor code_interpreter');
    expect(running.emulator.requests.filter((r) => r.path.includes('/threads'))).to.have.length(0);
  });
});
