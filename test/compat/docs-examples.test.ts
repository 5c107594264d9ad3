import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sinon from 'sinon';
import { Emulator, type RecordedRequest } from '../../src/testing/emulator/index.js';

/**
 * The compatibility suite: the clients people use against the emulator, each holding a
 * two-turn conversation with memory, a tool call and a stream, on Chat Completions and
 * Responses. The code is the examples of docs/testing.md, run as they stand (each asserts its
 * own answers with node:assert), so the guide cannot drift from what works.
 */
const DOC = new URL('../../../docs/testing.md', import.meta.url);
/** Written next to the compiled tests, inside the package, so `skein/testing` resolves to this build. */
const OUT = new URL('./examples/', import.meta.url);

function docExamples(): Map<string, string> {
  const examples = new Map<string, string>();
  for (const match of readFileSync(DOC, 'utf8').matchAll(/```js example=([\w-]+)\n([\s\S]*?)```/g)) examples.set(match[1], match[2]);
  return examples;
}

type Body = Record<string, unknown>;

describe('Compatibility: the clients of docs/testing.md against the emulator', function () {
  this.timeout(60_000);
  const examples = docExamples();
  let started: Emulator[];

  before(() => mkdirSync(fileURLToPath(OUT), { recursive: true }));

  beforeEach(() => {
    started = [];
    const start = Emulator.start.bind(Emulator);
    sinon.stub(Emulator, 'start').callsFake(async (options) => {
      const emulator = await start(options);
      started.push(emulator);
      return emulator;
    });
  });

  afterEach(async () => {
    sinon.restore();
    await Promise.all(started.map((e) => e.stop()));
  });

  /** Runs one example of the guide in this process; resolves with what its emulator received. */
  async function runExample(name: string): Promise<RecordedRequest[]> {
    const code = examples.get(name);
    expect(code, `docs/testing.md has an example named ${name}`).to.be.a('string');
    const file = new URL(`${name}.mjs`, OUT);
    writeFileSync(file, code!);
    await import(`${pathToFileURL(fileURLToPath(file)).href}?run=${Date.now()}`);
    expect(started).to.have.length(1);
    return started[0].requests;
  }

  const bodies = (requests: RecordedRequest[], path: string) => requests.filter((r) => r.path === path).map((r) => r.body as Body);

  it('the guide has one example per client', () => {
    expect([...examples.keys()].sort()).to.deep.equal(['langchain', 'openai-agents', 'openai-sdk', 'vercel-ai']);
  });

  it('the openai SDK: Responses with previous_response_id and a tool call, Chat Completions with a stream', async () => {
    const requests = await runExample('openai-sdk');
    expect(bodies(requests, '/v1/responses').filter((b) => b.previous_response_id)).to.have.length(2);
    expect(bodies(requests, '/v1/chat/completions').some((b) => b.stream === true)).to.equal(true);
  });

  it('the Vercel AI SDK: chat and responses, the second responses turn by item_reference', async () => {
    const requests = await runExample('vercel-ai');
    expect(bodies(requests, '/v1/chat/completions')).to.have.length(5);
    const responses = bodies(requests, '/v1/responses');
    expect(responses).to.have.length(5);
    // The turn that failed before: earlier output sent back as a reference to the stored item.
    const input = responses[1].input as Body[];
    expect(input.map((item) => item.type ?? item.role)).to.deep.equal(['user', 'item_reference', 'user']);
  });

  it('OpenAI Agents JS: chat with the history sent, responses with previousResponseId, tool calls and streams', async () => {
    const requests = await runExample('openai-agents');
    const responses = bodies(requests, '/v1/responses');
    expect(responses[1].previous_response_id).to.be.a('string');
    expect(responses.some((b) => b.stream === true)).to.equal(true);
    expect(bodies(requests, '/v1/chat/completions').some((b) => b.stream === true)).to.equal(true);
  });

  it('LangChain ChatOpenAI: chat and responses (useResponsesApi), tool calls and streams', async () => {
    const requests = await runExample('langchain');
    expect(bodies(requests, '/v1/chat/completions')).to.have.length(5);
    expect(bodies(requests, '/v1/responses')).to.have.length(5);
    expect(bodies(requests, '/v1/responses').some((b) => b.stream === true)).to.equal(true);
  });
});
