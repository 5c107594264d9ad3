import { expect } from 'chai';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type AIAgent, agentToken, approvalResponse, ChatAgent, ConfigurationError, createContainer, SkeinError, waitingApprovalsOf } from 'skein';
import { type HostedMcpApproval, OpenAIResponsesClient, hostedMcp, openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { CountingProxy } from './counting-proxy.js';
import { EverythingHttp, tempDir } from './mcp-fixtures.js';

type Body = { tools?: unknown[]; input: unknown };

describe('Hosted MCP on Responses (openai SDK -> emulator -> server-everything over HTTP)', () => {
  let emulator: Emulator;
  let http: EverythingHttp;

  let proxy: CountingProxy;

  before(async () => {
    [emulator, http] = await Promise.all([Emulator.start(), EverythingHttp.start()]);
    proxy = await CountingProxy.start(http.url);
  });
  after(async () => {
    await Promise.all([emulator.stop(), http.stop(), proxy.stop()]);
  });

  const raw = () => new OpenAI({ apiKey: 'k', baseURL: emulator.openaiBaseURL, maxRetries: 0 });

  function agentWith(store = true, requireApproval: HostedMcpApproval = 'never'): ChatAgent {
    const client = new OpenAIResponsesClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-4.1', store });
    return new ChatAgent({
      chatClient: client,
      chatOptions: { additionalProperties: { hostedMcp: [hostedMcp({ label: 'everything', url: proxy.url, allowedTools: ['echo', 'get-sum'], requireApproval })] } },
    });
  }

  /** The `tools/call` requests that reached the MCP server through the counting proxy since `mark`. */
  const callsOf = (mark: number) => proxy.calls - mark;


  it('hands the server to the service, which lists its tools and calls one without approval', async () => {
    const agent = agentWith();
    const reply = await agent.run('call echo {"message":"hosted"}');
    expect(reply.text).to.equal('echo returned: Echo: hosted');
    expect(reply.approvalRequests).to.deep.equal([]);
    const body = emulator.requestsTo('/v1/responses').at(-1)!.body as Body;
    expect(body.tools).to.deep.equal([{ type: 'mcp', server_label: 'everything', server_url: proxy.url, allowed_tools: ['echo', 'get-sum'], require_approval: 'never' }]);
    // The service keeps the listing and the call in the response (the thread's history).
    const stored = await raw().responses.retrieve(reply.responseId!);
    expect(stored.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    const call = stored.output[1] as OpenAI.Responses.ResponseOutputItem.McpCall;
    expect(call).to.include({ server_label: 'everything', name: 'echo', arguments: '{"message":"hosted"}', output: 'Echo: hosted', error: null });
  });

  for (const store of [true, false]) {
    const kind = store ? 'service thread' : 'store: false thread';

    it(`asks before a call (require_approval); approved, the tool runs once (${kind}, streamed)`, async () => {
      const agent = agentWith(store, 'always');
      const thread = agent.getNewThread();
      const mark = proxy.calls;
      const asked = await agent.run('call get-sum {"a":2,"b":40}', { thread });
      expect(asked.approvalRequests).to.have.length(1);
      const request = asked.approvalRequests[0]!;
      expect(request).to.include({ kind: 'function-approval-request', name: 'get-sum', arguments: '{"a":2,"b":40}' });
      expect(request.callId).to.match(/^mcpr_/);
      expect(callsOf(mark)).to.equal(0);

      const updates = await lastValueFrom(agent.runStream(approvalResponse(request, true), { thread }).pipe(toArray()));
      const answered = updates.map((u) => u.text).join('');
      expect(answered).to.equal('get-sum returned: The sum of 2 and 40 is 42.');
      const body = emulator.requestsTo('/v1/responses').at(-1)!.body as Body;
      expect((body.input as { type: string }[]).filter((i) => i.type === 'mcp_approval_response')).to.deep.equal([
        { type: 'mcp_approval_response', approval_request_id: request.callId, approve: true },
      ]);
      // A later turn does not run it again.
      const later = await agent.run('Thanks!', { thread });
      expect(later.approvalRequests).to.deep.equal([]);
      expect(callsOf(mark)).to.equal(1);
    });

    it(`a rejected request runs nothing and the model hears why (${kind})`, async () => {
      const agent = agentWith(store, { never: ['echo'] });
      const thread = agent.getNewThread();
      const mark = proxy.calls;
      const asked = await agent.run('call get-sum {"a":1,"b":1}', { thread });
      const reply = await agent.run(approvalResponse(asked.approvalRequests[0]!, false, 'not today'), { thread });
      expect(reply.text).to.equal('get-sum returned: Error: the user rejected this call: not today');
      expect(callsOf(mark)).to.equal(0);
    });

    it(`serializes mid-approval and resumes in another agent (${kind})`, async () => {
      const thread = agentWith(store, 'always').getNewThread();
      const asked = await agentWith(store, 'always').run('call echo {"message":"later"}', { thread });
      const saved = JSON.parse(JSON.stringify(await thread.serialize())) as unknown;
      const other = agentWith(store, 'always');
      const resumed = await other.deserializeThread(saved);
      // What the CLI and the Dev UI show on resume (and check an answer against): the hosted request, by name.
      expect(waitingApprovalsOf(resumed).map(({ callId, name, arguments: args }) => ({ callId, name, args: JSON.parse(args) as unknown }))).to.deep.equal([
        { callId: asked.approvalRequests[0]!.callId, name: asked.approvalRequests[0]!.name, args: { message: 'later' } },
      ]);
      const reply = await other.run(approvalResponse(asked.approvalRequests[0]!, true), { thread: resumed });
      expect(reply.text).to.equal('echo returned: Echo: later');
      expect(waitingApprovalsOf(resumed)).to.deep.equal([]);
    });
  }

  it('is configured in a config file (agent key hostedMcp) and asks as declared', async () => {
    const file = path.join(await tempDir(), 'skein.yaml');
    await writeFile(
      file,
      `
plugins:
  openai: { apiKey: k, baseURL: "\${EMULATOR_URL}", maxRetries: 0 }
agents:
  helper:
    client: openai-responses
    model: gpt-4.1
    store: false
    hostedMcp:
      - label: everything
        url: "\${MCP_URL}"
        headers: { Authorization: "Bearer tok" }
        allowedTools: [echo, get-sum]
        requireApproval: { never: [echo] }
`,
    );
    const container = await createContainer(file, { env: { ...process.env, EMULATOR_URL: emulator.openaiBaseURL, MCP_URL: proxy.url } });
    try {
      const agent = container.get<AIAgent>(agentToken('helper'));
      const thread = agent.getNewThread();
      expect((await agent.run('call echo {"message":"from yaml"}', { thread })).text).to.equal('echo returned: Echo: from yaml');
      const body = emulator.requestsTo('/v1/responses').at(-1)!.body as Body;
      expect(body.tools).to.deep.equal([
        {
          type: 'mcp',
          server_label: 'everything',
          server_url: proxy.url,
          headers: { Authorization: 'Bearer tok' },
          allowed_tools: ['echo', 'get-sum'],
          require_approval: { never: { tool_names: ['echo'] } },
        },
      ]);
      const asked = await agent.run('call get-sum {"a":20,"b":22}', { thread });
      expect(asked.approvalRequests.map((r) => r.name)).to.deep.equal(['get-sum']);
      const reply = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
      expect(reply.text).to.equal('get-sum returned: The sum of 20 and 22 is 42.');
    } finally {
      await container.unbindAllAsync();
    }
  });

  it('reports a bad hostedMcp config as a ConfigurationError, with the rest of the config', async () => {
    const error = await Promise.resolve()
      .then(() =>
        createContainer({
          plugins: [openaiPlugin({ apiKey: 'k', baseURL: emulator.openaiBaseURL })],
          agents: {
            a: { client: 'openai-responses', model: 'm', hostedMcp: [{ label: 'x', url: 'not a url' }] },
            b: { client: 'openai-responses', model: 'm', hostedMcp: [{ label: 'x', url: proxy.url, requireApproval: 'sometimes' }] },
            c: { client: 'openai-chat', model: 'm', hostedMcp: [{ label: 'x', url: proxy.url }] },
            d: { client: 'openai-responses', model: 'm', hostedMcp: [{ label: 'x', url: proxy.url, requireApproval: { never: ['echo'] } }] },
          },
        }),
      )
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigurationError);
    const message = String((error as Error).message);
    expect(message).to.match(/agents\.a\.hostedMcp.*"url" must be an http\(s\) URL, got "not a url"/);
    expect(message).to.match(/agents\.b\.hostedMcp.*"requireApproval" must be "always", "never" or \{ never: \[tool names\] \}, got "sometimes"/);
    expect(message).to.match(/agents\.c\.hostedMcp.*only "openai-responses" agents/);
    expect(message).not.to.match(/agents\.d/);
  });

  it('checks servers given in code when declared', () => {
    expect(() => hostedMcp({ label: 'has space', url: proxy.url })).to.throw(ConfigurationError, /"label" must be/);
  });

  it('streams the request in the reply; a new message instead of an answer runs nothing and asks no more', async () => {
    const agent = agentWith(true, 'always');
    const thread = agent.getNewThread();
    const mark = proxy.calls;
    const updates = await lastValueFrom(agent.runStream('call echo {"message":"maybe"}', { thread }).pipe(toArray()));
    const streamed = updates.flatMap((u) => u.contents).filter((c) => c.kind === 'function-approval-request');
    expect(streamed.map((c) => c.name)).to.deep.equal(['echo']);
    const next = await agent.run('Never mind.', { thread });
    expect(next.approvalRequests).to.deep.equal([]);
    expect(next.text).to.match(/^You said: "Never mind\."/);
    expect(callsOf(mark)).to.equal(0);
    // The request is no longer pending: answering it now is an error.
    const late = await agent.run(approvalResponse({ callId: streamed[0]!.callId }, true), { thread }).catch((e: unknown) => e);
    expect(late).to.be.instanceOf(SkeinError);
  });

  it('a bad hostedMcp entry given in code fails the run with a ConfigurationError and sends nothing', async () => {
    const client = new OpenAIResponsesClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-4.1' });
    const agent = new ChatAgent({ chatClient: client, chatOptions: { additionalProperties: { hostedMcp: [{ label: 'x' }] } } });
    const before = emulator.requestsTo('/v1/responses').length;
    const error = await agent.run('hi').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigurationError);
    expect(String(error)).to.match(/hostedMcp\[0\]: "url" must be an http\(s\) URL/);
    expect(emulator.requestsTo('/v1/responses').length).to.equal(before);
  });

  it('a fork of a thread waiting on the service carries no pending request; the original can still be approved', async () => {
    const agent = agentWith(false, 'always');
    const thread = agent.getNewThread();
    const asked = await agent.run('call echo {"message":"fork"}', { thread });
    const request = asked.approvalRequests[0]!;
    const fork = await agent.forkThread(thread);
    const refused = await agent.run(approvalResponse(request, true), { thread: fork }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(SkeinError);
    expect((await agent.run(approvalResponse(request, true), { thread })).text).to.equal('echo returned: Echo: fork');
  });

  it('refuses an answer to a request nobody made', async () => {
    const agent = agentWith(true, 'always');
    const thread = agent.getNewThread();
    await agent.run('call echo {"message":"x"}', { thread });
    const error = await agent.run(approvalResponse({ callId: 'mcpr_nope' }, true), { thread }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SkeinError);
    expect(String(error)).to.match(/No pending approval for call mcpr_nope/);
  });
});
