import type { Part } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { expect } from 'chai';
import { lastValueFrom } from 'rxjs';
import type { ChatMessage } from 'skein';
import { A2AAgent, A2AInputError, agentMessage, textPart } from 'skein/a2a';
import { startSdkServer } from './remote-fixtures.js';
import { rejection } from '../support/async-expectations.js';

/** A remote agent on the SDK's own server that keeps the parts of every message it receives. */
class RecordingExecutor implements AgentExecutor {
  readonly received: Part[][] = [];
  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    this.received.push(request.userMessage.parts);
    bus.publish(AgentEvent.message(agentMessage([textPart('got it')], { taskId: request.taskId, contextId: request.contextId })));
  };
  cancelTask = async (): Promise<void> => {};
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const PDF = Buffer.from('%PDF-1.7 a contract');

describe('A2A input: every content kind reaches the remote agent as an A2A part (real @a2a-js/sdk server)', () => {
  let executor: RecordingExecutor;
  let server: Awaited<ReturnType<typeof startSdkServer>>;
  let remote: A2AAgent;
  /** Requests made through the agent's fetch (its card first). */
  let fetches: number;

  const user = (...contents: ChatMessage['contents']): ChatMessage => ({ role: 'user', contents });
  /** The received parts, in a form easy to compare (bytes as base64). */
  const plain = (parts: Part[]) =>
    parts.map((p) => ({
      kind: p.content?.$case,
      value: p.content?.$case === 'raw' ? Buffer.from(p.content.value).toString('base64') : p.content?.value,
      filename: p.filename,
      mediaType: p.mediaType,
    }));

  beforeEach(async () => {
    executor = new RecordingExecutor();
    server = await startSdkServer(executor, { streaming: false });
    remote = new A2AAgent({ url: server.cardUrl, name: 'remote', fetch: countingFetch() });
    fetches = 0;
  });

  afterEach(async () => {
    await server.close();
  });

  function countingFetch(): typeof fetch {
    return (input, init) => {
      fetches++;
      return fetch(input, init);
    };
  }

  it('text, image bytes, a PDF, a URL and JSON data arrive as text, file (name + media type) and data parts', async () => {
    const response = await remote.run(
      user(
        { kind: 'text', text: 'Please review.' },
        { kind: 'data', data: PNG.toString('base64'), mediaType: 'image/png' },
        { kind: 'data', data: PDF.toString('base64'), mediaType: 'application/pdf', additionalProperties: { filename: 'contract.pdf' } },
        { kind: 'uri', uri: 'https://example.com/files/q3%20report.pdf' },
        { kind: 'uri', uri: 'https://example.com/cat', mediaType: 'image/jpeg' },
        { kind: 'data', data: Buffer.from('{"order":42,"items":["tea"]}').toString('base64'), mediaType: 'application/json' },
      ),
    );
    expect(response.text).to.equal('got it');
    expect(plain(executor.received[0])).to.deep.equal([
      { kind: 'text', value: 'Please review.', filename: '', mediaType: 'text/plain' },
      { kind: 'raw', value: PNG.toString('base64'), filename: 'file-2.png', mediaType: 'image/png' },
      { kind: 'raw', value: PDF.toString('base64'), filename: 'contract.pdf', mediaType: 'application/pdf' },
      { kind: 'url', value: 'https://example.com/files/q3%20report.pdf', filename: 'q3 report.pdf', mediaType: 'application/pdf' },
      { kind: 'url', value: 'https://example.com/cat', filename: 'cat', mediaType: 'image/jpeg' },
      { kind: 'data', value: { order: 42, items: ['tea'] }, filename: '', mediaType: 'application/json' },
    ]);
  });

  it('a data: URL is sent as the file bytes it holds', async () => {
    await remote.run(user({ kind: 'uri', uri: `data:image/png;base64,${PNG.toString('base64')}` }));
    expect(plain(executor.received[0])).to.deep.equal([{ kind: 'raw', value: PNG.toString('base64'), filename: 'file-1.png', mediaType: 'image/png' }]);
  });

  it('a content kind A2A has no part for is refused with A2AInputError before any request (run and runStream)', async () => {
    const custom = { kind: 'x-image-ref', ref: 'img-7' } as unknown as ChatMessage['contents'][number];
    const error = await rejection(remote.run(user({ kind: 'text', text: 'look' }, custom)));
    expect(error).to.be.instanceOf(A2AInputError);
    expect(error.message).to.contain('"x-image-ref"');
    expect(await rejection(lastValueFrom(remote.runStream(user({ kind: 'text', text: 'look' }, custom))))).to.be.instanceOf(A2AInputError);
    expect(executor.received).to.have.length(0);
    expect(fetches).to.equal(0);
  });

  it('what a hosted MCP server did (a Responses reply passed on) stays out of the parts; the text goes', async () => {
    await remote.run({
      role: 'assistant',
      contents: [
        { kind: 'hosted-mcp-tools', listId: 'mcpl_1', serverLabel: 'docs', tools: [{ name: 'search', inputSchema: { type: 'object' } }] },
        { kind: 'hosted-mcp-call', callId: 'mcp_1', serverLabel: 'docs', name: 'search', arguments: '{}', result: 'found' },
        { kind: 'text', text: 'The docs say yes.' },
      ],
    });
    expect(plain(executor.received[0])).to.deep.equal([{ kind: 'text', value: 'The docs say yes.', filename: '', mediaType: 'text/plain' }]);
  });

  it('an input with nothing to send is an A2AInputError, not a ConnectionError', async () => {
    const error = await rejection(remote.run(user({ kind: 'text', text: '' })));
    expect(error).to.be.instanceOf(A2AInputError);
    expect(executor.received).to.have.length(0);
  });
});
