import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Container } from 'inversify';
import { lastValueFrom, toArray } from 'rxjs';
import { AbortError, type AIAgent, ChatAgent, ConfigurationError, agentToken, approvalResponse, createContainer, type FunctionResultContent } from 'skein';
import { McpServerRegistry, mcpServer } from 'skein/mcp';
import { OpenAIChatClient } from 'skein/openai';
import { telemetryMiddleware } from 'skein/telemetry';
import { Emulator } from 'skein/testing';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EVERYTHING, EverythingHttp, FAULT_SERVER, marks, tempDir } from './mcp-fixtures.js';

function resultsOf(messages: readonly { contents: readonly { kind: string }[] }[]): FunctionResultContent[] {
  return messages.flatMap((m) => m.contents).filter((c): c is FunctionResultContent => c.kind === 'function-result');
}

describe('skein/mcp: agents configured from YAML call MCP tools (emulator + server-everything)', () => {
  let emulator: Emulator;
  let http: EverythingHttp;
  let dir: string;
  const containers: Container[] = [];

  before(async () => {
    [emulator, http] = await Promise.all([Emulator.start(), EverythingHttp.start()]);
    dir = await tempDir();
  });
  afterEach(async () => {
    await Promise.all(containers.splice(0).map((c) => c.unbindAllAsync()));
  });
  after(async () => {
    await Promise.all([emulator.stop(), http.stop()]);
  });

  async function containerFrom(yaml: string, name = 'skein.yaml'): Promise<Container> {
    const file = path.join(dir, name);
    await writeFile(file, yaml);
    const container = await createContainer(file, { env: { ...process.env, EMULATOR_URL: emulator.openaiBaseURL, EVERYTHING_URL: http.url, MCP_TOKEN: 'tok-secret' } });
    containers.push(container);
    return container;
  }

  const bothTransports = () => `
plugins:
  openai: { apiKey: k, baseURL: "\${EMULATOR_URL}", maxRetries: 0 }
  mcp:
    servers:
      local:
        command: ${JSON.stringify(process.execPath)}
        args: [${JSON.stringify(EVERYTHING)}, stdio]
        toolPrefix: local_
        requiresApproval: [get-sum]
      remote:
        url: "\${EVERYTHING_URL}"
        headers: { Authorization: "Bearer \${MCP_TOKEN}" }
        toolPrefix: remote_
agents:
  helper:
    client: openai-chat
    model: gpt-4.1
    tools: [mcp:local, "mcp:remote/echo"]
  serviced:
    client: openai-responses
    model: gpt-4.1
    tools: [mcp:local, "mcp:remote/echo"]
`;

  it('holds a multi-turn conversation over stdio and Streamable HTTP that serializes and resumes mid-approval', async () => {
    const first = await containerFrom(bothTransports());
    const agent = first.get<AIAgent>(agentToken('helper'));
    const thread = agent.getNewThread();

    const echoed = await agent.run('call remote_echo {"message":"over HTTP"}', { thread });
    expect(echoed.text).to.equal('remote_echo returned: Echo: over HTTP');
    const sent = emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { tools: { function: { name: string } }[] };
    const offered = sent.tools.map((t) => t.function.name);
    expect(offered).to.include.members(['remote_echo', 'local_echo', 'local_get-sum', 'local_get-tiny-image']);
    expect(offered.filter((n) => n.startsWith('remote_'))).to.deep.equal(['remote_echo']);

    const asked = await agent.run('call local_get-sum {"a":2,"b":40}', { thread });
    expect(asked.approvalRequests).to.have.length(1);
    expect(asked.approvalRequests[0]).to.deep.include({ name: 'local_get-sum', arguments: '{"a":2,"b":40}' });
    const saved = JSON.parse(JSON.stringify(await thread.serialize()));

    // Another process: a new container from the same file resumes the thread and answers.
    const second = await containerFrom(bothTransports(), 'again.yaml');
    const resumedAgent = second.get<AIAgent>(agentToken('helper'));
    const resumed = await resumedAgent.deserializeThread(saved);
    const approved = await resumedAgent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread: resumed });
    expect(approved.text).to.equal('local_get-sum returned: The sum of 2 and 40 is 42.');

    // Answering again is refused: the call ran once and is no longer pending.
    const twice = await resumedAgent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread: resumed }).catch((e: unknown) => e);
    expect((twice as Error).message).to.match(/No pending approval/);
    const history = await resumed.messageStore!.listMessages();
    const sums = resultsOf(history).filter((r) => r.callId === asked.approvalRequests[0]!.callId);
    expect(sums).to.have.length(1);

    const memory = await resumedAgent.run('what did we talk about?', { thread: resumed });
    expect(memory.text).to.contain('call remote_echo').and.contain('call local_get-sum');
  });

  it('an openai-responses agent (service-kept thread) resumes mid-approval the same way', async () => {
    const container = await containerFrom(bothTransports());
    const agent = container.get<AIAgent>(agentToken('serviced'));
    const thread = agent.getNewThread();
    expect((await agent.run('call remote_echo {"message":"via Responses"}', { thread })).text).to.equal('remote_echo returned: Echo: via Responses');
    const asked = await agent.run('call local_get-sum {"a":1,"b":2}', { thread });
    expect(asked.approvalRequests.map((r) => r.name)).to.deep.equal(['local_get-sum']);
    const other = await containerFrom(bothTransports(), 'responses-again.yaml');
    const resumedAgent = other.get<AIAgent>(agentToken('serviced'));
    const resumed = await resumedAgent.deserializeThread(JSON.parse(JSON.stringify(await thread.serialize())));
    expect(resumed.serviceThreadId).to.be.a('string');
    expect((await resumedAgent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread: resumed })).text).to.equal('local_get-sum returned: The sum of 1 and 2 is 3.');
  });

  it('images from MCP tools reach the next model call as image content; the thread keeps the tool result as it was', async () => {
    const container = await containerFrom(bothTransports());
    const agent = container.get<AIAgent>(agentToken('helper'));
    const thread = agent.getNewThread();
    await agent.run('call local_get-tiny-image', { thread });
    type Sent = { role: string; content: unknown; tool_call_id?: string };
    const sent = (emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { messages: Sent[] }).messages;
    const toolIndex = sent.findIndex((m) => m.role === 'tool');
    expect(String(sent[toolIndex]!.content)).to.contain('"type":"image"');
    const images = sent[toolIndex + 1]!;
    expect(images.role).to.equal('user');
    const parts = images.content as { type: string; image_url?: { url: string } }[];
    expect(parts.map((p) => p.type)).to.deep.equal(['text', 'image_url']);
    expect(parts[1]!.image_url!.url).to.match(/^data:image\/png;base64,iVBOR/);
    const kept = await thread.messageStore!.listMessages();
    expect(kept.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
  });

  it('a rejected approval never calls the tool; the model hears why', async () => {
    const container = await containerFrom(bothTransports());
    const agent = container.get<AIAgent>(agentToken('helper'));
    const thread = agent.getNewThread();
    const asked = await agent.run('call local_get-sum {"a":1,"b":1}', { thread });
    const rejected = await agent.run(approvalResponse(asked.approvalRequests[0]!, false, 'not now'), { thread });
    expect(rejected.text).to.contain('the user rejected this call: not now');
  });

  it('reports every config problem at once: unknown servers, bad server entries, unknown prefixes', async () => {
    const failure = await containerFrom(
      `
plugins:
  openai: { apiKey: k, baseURL: "\${EMULATOR_URL}" }
  mcp:
    servers:
      good: { command: node, args: [x.js] }
      broken: { command: 5 }
agents:
  helper: { client: openai-chat, tools: [mcp:nope, "mcp:good/", "web:search"] }
`,
      'bad.yaml',
    ).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ConfigurationError);
    const problems = (failure as ConfigurationError).problems.join('\n');
    expect(problems).to.contain('plugins.mcp.servers.broken');
    // The plugin failed its schema, so its references cannot be checked; that is its own problem,
    // not one more per reference (one message per root cause). A prefix no plugin resolves still is.
    expect(problems).not.to.contain('agents.helper.tools[0]');
    expect(problems).to.contain('agents.helper.tools[2]');
  });

  it('checks mcp: references against the configured servers', async () => {
    const failure = await containerFrom(
      `
plugins:
  openai: { apiKey: k, baseURL: "\${EMULATOR_URL}" }
  mcp: { servers: { good: { command: node } } }
agents:
  helper: { client: openai-chat, tools: [mcp:nope, "mcp:good/", "web:search"] }
`,
      'refs.yaml',
    ).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ConfigurationError);
    const problems = (failure as ConfigurationError).problems;
    expect(problems).to.have.length(3);
    expect(problems[0]).to.match(/agents\.helper\.tools\[0\].*MCP server "nope".*configured servers: good/);
    expect(problems[1]).to.match(/agents\.helper\.tools\[1\].*empty tool pattern/);
    expect(problems[2]).to.match(/agents\.helper\.tools\[2\].*no loaded plugin resolves "web:"/);
  });

  it('shares one connection per server per container and closes it when the container is disposed', async () => {
    const file = path.join(dir, 'marks-dispose');
    const container = await containerFrom(
      `
plugins:
  openai: { apiKey: k, baseURL: "\${EMULATOR_URL}" }
  mcp:
    servers:
      faults: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(FAULT_SERVER)}, normal], env: { MARK_FILE: ${JSON.stringify(file)} } }
agents:
  a: { client: openai-chat, model: gpt-4.1, tools: [mcp:faults] }
  b: { client: openai-chat, model: gpt-4.1, tools: ["mcp:faults/pid"] }
`,
      'dispose.yaml',
    );
    const a = container.get<AIAgent>(agentToken('a'));
    const b = container.get<AIAgent>(agentToken('b'));
    const pidA = (await a.run('call pid')).text;
    const pidB = (await b.run('call pid')).text;
    expect(pidA).to.equal(pidB);
    const pid = Number(pidA.replace('pid returned: ', ''));
    expect(() => process.kill(pid, 0)).to.not.throw();
    const registry = container.get(McpServerRegistry);
    containers.splice(containers.indexOf(container), 1);
    await container.unbindAllAsync();
    expect(() => process.kill(pid, 0)).to.throw();
    expect(await registry.get('faults').listTools().catch((e: unknown) => (e as Error).message)).to.match(/closed with its container/);
    expect((await marks(file)).filter((m) => m === 'call pid')).to.have.length(2);
  });

  it('a tool added on the server (list_changed) is offered from the next run; streaming runs call MCP tools too', async () => {
    const server = mcpServer({ name: 'faults', command: process.execPath, args: [FAULT_SERVER, 'normal'] });
    const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: [server] });
    try {
      const thread = agent.getNewThread();
      expect((await agent.run('call add-tool', { thread })).text).to.equal('add-tool returned: added added-5');
      const updates = await lastValueFrom(agent.runStream('call added-5', { thread }).pipe(toArray()));
      expect(updates.map((u) => u.text).join('')).to.equal('added-5 returned: ran added-5');
    } finally {
      await server.close();
    }
  });

  it('aborting a run cancels the MCP call in flight and leaves the thread unchanged', async () => {
    const file = path.join(dir, 'marks-abort');
    const server = mcpServer({ name: 'faults', command: process.execPath, args: [FAULT_SERVER, 'normal'], env: { MARK_FILE: file } });
    const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: [server] });
    try {
      const thread = agent.getNewThread();
      await agent.run('hello', { thread });
      const controller = new AbortController();
      const running = agent.run('call slow', { thread, signal: controller.signal });
      while (!(await marks(file)).includes('call slow')) await new Promise((r) => setTimeout(r, 20));
      controller.abort();
      expect(await running.catch((e: unknown) => e)).to.be.instanceOf(AbortError);
      while (!(await marks(file)).includes('cancelled')) await new Promise((r) => setTimeout(r, 20));
      expect(await thread.messageStore!.listMessages()).to.have.length(2);
    } finally {
      await server.close();
    }
  });

  it('mcpServer({...}) in code is an agent tool set; close() stops the server', async () => {
    const server = mcpServer({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], allowTools: ['echo'] });
    const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: [server] });
    try {
      expect((await agent.run('call echo {"message":"in code"}')).text).to.equal('echo returned: Echo: in code');
    } finally {
      await server.close();
    }
  });

  it('execute_tool spans name the MCP server and the tool as the server knows it', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const server = mcpServer({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], allowTools: ['echo'], toolPrefix: 'ev_' });
    const agent = new ChatAgent({
      chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }),
      tools: [server],
      middleware: telemetryMiddleware({ tracerProvider: provider }),
    });
    try {
      expect((await agent.run('call ev_echo {"message":"traced"}')).text).to.equal('ev_echo returned: Echo: traced');
      const tool = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool ev_echo');
      expect(tool, 'an execute_tool span').to.not.equal(undefined);
      expect(tool!.attributes).to.deep.include({
        'gen_ai.tool.name': 'ev_echo',
        'skein.tool.source.kind': 'mcp',
        'skein.tool.source.server': 'everything',
        'skein.tool.source.name': 'echo',
      });
    } finally {
      await server.close();
      await provider.shutdown();
    }
  });
});
