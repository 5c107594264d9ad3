import { expect } from 'chai';
import OpenAI from 'openai';
import { ChatAgent } from 'skein';
import { OpenAIResponsesClient, hostedMcp } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { EverythingHttp } from './mcp-fixtures.js';

type Body = { tools?: unknown[]; input: unknown };

describe('Hosted MCP on Responses (openai SDK -> emulator -> server-everything over HTTP)', () => {
  let emulator: Emulator;
  let http: EverythingHttp;

  before(async () => {
    [emulator, http] = await Promise.all([Emulator.start(), EverythingHttp.start()]);
  });
  after(async () => {
    await Promise.all([emulator.stop(), http.stop()]);
  });

  const raw = () => new OpenAI({ apiKey: 'k', baseURL: emulator.openaiBaseURL, maxRetries: 0 });

  function agentWith(store = true): ChatAgent {
    const client = new OpenAIResponsesClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-4.1', store });
    return new ChatAgent({
      chatClient: client,
      chatOptions: { additionalProperties: { hostedMcp: [hostedMcp({ label: 'everything', url: http.url, allowedTools: ['echo', 'get-sum'] })] } },
    });
  }

  it('hands the server to the service, which lists its tools and calls one without approval', async () => {
    const agent = agentWith();
    const reply = await agent.run('call echo {"message":"hosted"}');
    expect(reply.text).to.equal('echo returned: Echo: hosted');
    expect(reply.approvalRequests).to.deep.equal([]);
    const body = emulator.requestsTo('/v1/responses').at(-1)!.body as Body;
    expect(body.tools).to.deep.equal([{ type: 'mcp', server_label: 'everything', server_url: http.url, allowed_tools: ['echo', 'get-sum'], require_approval: 'never' }]);
    // The service keeps the listing and the call in the response (the thread's history).
    const stored = await raw().responses.retrieve(reply.responseId!);
    expect(stored.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    const call = stored.output[1] as OpenAI.Responses.ResponseOutputItem.McpCall;
    expect(call).to.include({ server_label: 'everything', name: 'echo', arguments: '{"message":"hosted"}', output: 'Echo: hosted', error: null });
  });
});
