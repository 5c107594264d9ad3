import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import {
  type AIContent,
  type AgentRunResponseUpdate,
  ChatAgent,
  type ChatMessage,
  type HostedMcpCallContent,
  type HostedMcpToolsContent,
  SerializationError,
  SummarizingReducer,
  approvalResponse,
} from 'skein';
import { type HostedMcpApproval, OpenAIChatClient, OpenAIResponsesClient, hostedMcp } from 'skein/openai';
import { telemetryMiddleware, toGenAIMessages } from 'skein/telemetry';
import { Emulator, FakeChatClient, RESPONSES_INPUT_ITEMS_LISTINGS } from 'skein/testing';
import { CountingProxy } from './counting-proxy.js';
import { EverythingHttp } from './mcp-fixtures.js';

type Item = Record<string, unknown> & { type: string };

// Both ways a server lists a continuing response's input_items (chained threads are read from them).
for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS) describe(`Hosted MCP calls as thread content (openai SDK -> emulator -> server-everything over HTTP; input_items: ${listing})`, () => {
  let emulator: Emulator;
  let http: EverythingHttp;
  let proxy: CountingProxy;
  /** The bodies of the Responses replies the SDK received, in order (what the service returned). */
  let replies: string[];

  before(async () => {
    [emulator, http] = await Promise.all([Emulator.start({ responsesInputItems: listing }), EverythingHttp.start()]);
    proxy = await CountingProxy.start(http.url);
  });
  after(async () => {
    await Promise.all([emulator.stop(), http.stop(), proxy.stop()]);
  });
  beforeEach(() => {
    replies = [];
  });

  /** An SDK client that keeps each Responses reply body as received (JSON or the SSE text). */
  function recordingSdk(): OpenAI {
    return new OpenAI({
      apiKey: 'k',
      baseURL: emulator.openaiBaseURL,
      maxRetries: 0,
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if (String(url).endsWith('/responses')) replies.push(await response.clone().text());
        return response;
      },
    });
  }

  function agentWith(store: boolean, requireApproval: HostedMcpApproval = 'never', extra: Partial<ConstructorParameters<typeof ChatAgent>[0]> = {}): ChatAgent {
    const client = new OpenAIResponsesClient({ client: recordingSdk(), model: 'gpt-4.1', store });
    return new ChatAgent({
      ...extra,
      chatClient: client,
      chatOptions: { additionalProperties: { hostedMcp: [hostedMcp({ label: 'everything', url: proxy.url, allowedTools: ['echo', 'get-sum'], requireApproval })] } },
    });
  }

  /** The output items of the last recorded reply (a JSON body, or the response.completed event of a stream). */
  function lastOutput(): Item[] {
    const body = replies.at(-1)!;
    if (body.trimStart().startsWith('{')) return (JSON.parse(body) as { output: Item[] }).output;
    const completed = body.split('\n').find((line) => line.startsWith('data: ') && line.includes('"response.completed"'))!;
    return (JSON.parse(completed.slice('data: '.length)) as { response: { output: Item[] } }).response.output;
  }

  const lastInput = () => (emulator.requestsTo('/v1/responses').at(-1)!.body as { input: Item[] }).input;
  const hostedOf = (contents: readonly AIContent[]) => contents.filter((c) => c.kind === 'hosted-mcp-call' || c.kind === 'hosted-mcp-tools');
  const callsIn = (messages: readonly ChatMessage[]) => messages.flatMap((m) => m.contents).filter((c): c is HostedMcpCallContent => c.kind === 'hosted-mcp-call');

  it('a run shows the service\'s call with its server, arguments and output, in output order', async () => {
    const reply = await agentWith(true).run('call echo {"message":"shown"}');
    expect(reply.text).to.equal('echo returned: Echo: shown');
    const [listing, call] = hostedOf(reply.messages[0]!.contents) as [HostedMcpToolsContent, HostedMcpCallContent];
    expect(reply.messages[0]!.contents.map((c) => c.kind)).to.deep.equal(['hosted-mcp-tools', 'hosted-mcp-call', 'text']);
    const [listItem, callItem] = lastOutput();
    expect(call).to.deep.include({ kind: 'hosted-mcp-call', callId: callItem!.id, serverLabel: 'everything', name: 'echo', arguments: '{"message":"shown"}', result: 'Echo: shown' });
    expect(call.error).to.equal(undefined);
    expect(listing).to.include({ kind: 'hosted-mcp-tools', listId: listItem!.id, serverLabel: 'everything' });
    expect(listing.tools.map((t) => t.name).sort()).to.deep.equal(['echo', 'get-sum']);
    expect(listing.tools.find((t) => t.name === 'echo')!.inputSchema).to.have.nested.property('properties.message');
  });

  it('streams the call as it happens: progress marked with the server, then the finished call', async () => {
    const agent = agentWith(false);
    const thread = agent.getNewThread();
    const updates: AgentRunResponseUpdate[] = await lastValueFrom(agent.runStream('call get-sum {"a":19,"b":23}', { thread }).pipe(toArray()));
    const progress = updates.filter((u) => u.toolCallDelta?.serverLabel !== undefined).map((u) => u.toolCallDelta!);
    expect(progress[0]).to.include({ serverLabel: 'everything', name: 'get-sum', argumentsDelta: '' });
    expect(progress[0]!.callId).to.match(/^mcp_/);
    expect(progress.map((p) => p.argumentsDelta).join('')).to.equal('{"a":19,"b":23}');
    expect(progress.every((p) => p.callId === progress[0]!.callId)).to.equal(true);
    const streamed = callsIn([{ role: 'assistant', contents: updates.flatMap((u) => u.contents) }]);
    expect(streamed).to.have.length(1);
    expect(streamed[0]).to.include({ callId: progress[0]!.callId, name: 'get-sum', arguments: '{"a":19,"b":23}', result: 'The sum of 19 and 23 is 42.' });
    expect(updates.map((u) => u.text).join('')).to.equal('get-sum returned: The sum of 19 and 23 is 42.');
    // The thread keeps what a non-streaming run keeps: the listing, the call, the text, once each.
    const kept = await agent.getMessages(thread);
    expect(kept.at(-1)!.contents.map((c) => c.kind)).to.deep.equal(['hosted-mcp-tools', 'hosted-mcp-call', 'text']);
    expect(callsIn(kept)).to.deep.equal(streamed);
  });

  it('store: false: the next turn sends the mcp_list_tools and mcp_call items back exactly as returned; the service lists nothing again', async () => {
    const agent = agentWith(false);
    const thread = agent.getNewThread();
    await agent.run('call echo {"message":"remember me"}', { thread });
    const returned = lastOutput().filter((i) => i.type === 'mcp_list_tools' || i.type === 'mcp_call');
    expect(returned.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call']);
    const lists = proxy.lists;

    const next = await agent.run('What did the tool say?', { thread });
    const sent = lastInput();
    expect(sent.filter((i) => i.type === 'mcp_list_tools' || i.type === 'mcp_call')).to.deep.equal(returned);
    // In history order: question, listing, call, answer, then the new question.
    expect(sent.map((i) => i.type)).to.deep.equal(['message', 'mcp_list_tools', 'mcp_call', 'message', 'message']);
    // The service used the listing it was sent: no new mcp_list_tools, no tools/list to the server.
    expect(lastOutput().map((i) => i.type)).to.deep.equal(['message']);
    expect(proxy.lists).to.equal(lists);
    expect(hostedOf(next.messages.flatMap((m) => m.contents))).to.deep.equal([]);
  });

  it('store: false, approved through a request: the call names the request, and is sent back with it', async () => {
    const agent = agentWith(false, 'always');
    const thread = agent.getNewThread();
    const asked = await agent.run('call echo {"message":"approved"}', { thread });
    const request = asked.approvalRequests[0]!;
    const answered = await agent.run(approvalResponse(request, true), { thread });
    const [call] = callsIn(answered.messages);
    expect(call).to.include({ name: 'echo', result: 'Echo: approved', approvalRequestId: request.callId });
    const returnedCall = lastOutput().find((i) => i.type === 'mcp_call')!;
    await agent.run('Thanks!', { thread });
    expect(lastInput().filter((i) => i.type.startsWith('mcp_')).map((i) => i.type)).to.deep.equal([
      'mcp_list_tools',
      'mcp_approval_request',
      'mcp_approval_response',
      'mcp_call',
    ]);
    expect(lastInput().find((i) => i.type === 'mcp_call')).to.deep.equal(returnedCall);
  });

  it('a service thread sends nothing extra; its history read from the service shows the call', async () => {
    const agent = agentWith(true);
    const thread = agent.getNewThread();
    await agent.run('call echo {"message":"kept by the service"}', { thread });
    await agent.run('And now?', { thread });
    expect(lastInput().map((i) => i.type)).to.deep.equal(['message']);
    const history = await agent.getMessages(thread);
    expect(callsIn(history).map((c) => ({ name: c.name, result: c.result }))).to.deep.equal([{ name: 'echo', result: 'Echo: kept by the service' }]);
  });

  it('a service thread\'s history read from the service shows an approval, its answer and the call it made', async () => {
    const agent = agentWith(true, 'always');
    const thread = agent.getNewThread();
    const asked = await agent.run('call get-sum {"a":1,"b":2}', { thread });
    const request = asked.approvalRequests[0]!;
    await agent.run(approvalResponse(request, true), { thread });
    const contents = (await agent.getMessages(thread)).flatMap((m) => m.contents);
    expect(contents.map((c) => c.kind)).to.deep.equal([
      'text',
      'hosted-mcp-tools',
      'function-approval-request',
      'function-approval-response',
      'hosted-mcp-call',
      'text',
    ]);
    expect(contents[3]).to.include({ callId: request.callId, approved: true });
    expect(contents[4]).to.include({ name: 'get-sum', result: 'The sum of 1 and 2 is 3.', approvalRequestId: request.callId });
  });

  it('a fork of a conversation thread copies the messages without the service\'s MCP items; the fork goes on', async () => {
    const client = new OpenAIResponsesClient({ client: recordingSdk(), model: 'gpt-4.1', conversation: true });
    const agent = new ChatAgent({
      chatClient: client,
      chatOptions: { additionalProperties: { hostedMcp: [hostedMcp({ label: 'everything', url: proxy.url, allowedTools: ['echo'], requireApproval: 'never' })] } },
    });
    const thread = agent.getNewThread();
    await agent.run('call echo {"message":"before the fork"}', { thread });
    const fork = await agent.forkThread(thread);
    const forked = (await agent.getMessages(fork)).flatMap((m) => m.contents);
    expect(forked.map((c) => c.kind)).to.deep.equal(['text', 'text']);
    expect(forked[1]).to.include({ text: 'echo returned: Echo: before the fork' });
    const reply = await agent.run('call echo {"message":"after the fork"}', { thread: fork });
    expect(reply.text).to.equal('echo returned: Echo: after the fork');
    // The original keeps its items.
    expect(callsIn(await agent.getMessages(thread)).map((c) => c.result)).to.deep.equal(['Echo: before the fork']);
  });

  it('serialize/resume keeps the listing and the call, and the resumed thread sends them back', async () => {
    const thread = agentWith(false).getNewThread();
    const first = await agentWith(false).run('call echo {"message":"across processes"}', { thread });
    const saved = JSON.parse(JSON.stringify(await thread.serialize())) as unknown;
    const other = agentWith(false);
    const resumed = await other.deserializeThread(saved);
    const kept = await other.getMessages(resumed);
    expect(hostedOf(kept.flatMap((m) => m.contents))).to.deep.equal(hostedOf(first.messages.flatMap((m) => m.contents)));
    await other.run('Again?', { thread: resumed });
    expect(lastInput().filter((i) => i.type === 'mcp_call').map((i) => i.output)).to.deep.equal(['Echo: across processes']);
  });

  it('refuses a serialized hosted call or listing with a bad field, naming it', async () => {
    const thread = agentWith(false).getNewThread();
    await agentWith(false).run('call echo {"message":"x"}', { thread });
    const saved = JSON.parse(JSON.stringify(await thread.serialize())) as Record<string, unknown>;
    const text = JSON.stringify(saved);
    const badCall = JSON.parse(text.replace('"serverLabel":"everything","name":"echo"', '"serverLabel":7,"name":"echo"')) as unknown;
    const error = await agentWith(false).deserializeThread(badCall).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SerializationError);
    expect(String((error as Error).message)).to.match(/contents\[1\]\.serverLabel.*expected a string, found/);
    const badTool = JSON.parse(text.replace(/"inputSchema":\{/, '"inputSchemaX":{')) as unknown;
    const toolError = await agentWith(false).deserializeThread(badTool).catch((e: unknown) => e);
    expect(toolError).to.be.instanceOf(SerializationError);
    expect(String((toolError as Error).message)).to.match(/tools\[0\]\.inputSchema/);
  });

  for (const stream of [false, true]) {
    it(`a failed hosted call is shown as an error, with no output (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const agent = agentWith(false);
      const thread = agent.getNewThread();
      const input = 'call get-sum {"a":"not a number","b":1}';
      if (stream) await lastValueFrom(agent.runStream(input, { thread }).pipe(toArray()));
      else await agent.run(input, { thread });
      const returned = lastOutput().find((i) => i.type === 'mcp_call')!;
      expect(returned.status).to.equal('failed');
      const [call] = callsIn(await agent.getMessages(thread));
      expect(call).to.include({ name: 'get-sum', error: returned.error });
      expect(call!.error).to.be.a('string').and.not.equal('');
      expect(call!.result).to.equal(undefined);
      // Telemetry shows it as a call and an error response, like a local tool's.
      const parts = toGenAIMessages([{ role: 'assistant', contents: [call!] }])[0]!.parts;
      expect(parts).to.deep.equal([
        { type: 'tool_call', id: call!.callId, name: 'get-sum', arguments: { a: 'not a number', b: 1 }, server: 'everything' },
        { type: 'tool_call_response', id: call!.callId, response: { error: call!.error } },
      ]);
    });
  }

  it('telemetry: each hosted call is an execute_tool span under its chat span, with the server, like a local MCP tool', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    try {
      const agent = agentWith(true, 'never', { name: 'helper', middleware: telemetryMiddleware({ tracerProvider: provider, captureContent: true }) });
      await agent.run('call echo {"message":"traced"}');
      await agent.run('call get-sum {"a":"x","b":1}');
      const spans = exporter.getFinishedSpans();
      const chats = spans.filter((s) => s.name === 'chat gpt-4.1');
      const [echo, sum] = ['execute_tool echo', 'execute_tool get-sum'].map((name) => spans.find((s) => s.name === name)!);
      expect(echo!.parentSpanContext?.spanId).to.equal(chats[0]!.spanContext().spanId);
      expect(echo!.attributes).to.include({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'echo',
        'gen_ai.tool.type': 'extension',
        'gen_ai.tool.call.arguments': '{"message":"traced"}',
        'gen_ai.tool.call.result': '"Echo: traced"',
        'skein.tool.source.kind': 'mcp',
        'skein.tool.source.server': 'everything',
        'skein.tool.hosted': true,
      });
      expect(echo!.attributes['gen_ai.tool.call.id']).to.match(/^mcp_/);
      expect(echo!.status.code).to.not.equal(SpanStatusCode.ERROR);
      expect(sum!.parentSpanContext?.spanId).to.equal(chats[1]!.spanContext().spanId);
      expect(sum!.status.code).to.equal(SpanStatusCode.ERROR);
      expect(sum!.attributes['error.type']).to.equal('tool_error');
    } finally {
      await provider.shutdown();
    }
  });

  it('a summarizing reducer tells the summarizer about a hosted call like a local one, without the tool listing', async () => {
    const reply = await agentWith(false).run('call echo {"message":"summed up"}');
    const summarizer = new FakeChatClient().reply('They echoed a message.');
    const reducer = new SummarizingReducer({ maxMessages: 2, keep: 1, chatClient: summarizer });
    const history: ChatMessage[] = [
      { role: 'user', contents: [{ kind: 'text', text: 'call echo {"message":"summed up"}' }] },
      ...reply.messages,
      { role: 'user', contents: [{ kind: 'text', text: 'ok' }] },
    ];
    await reducer.reduce(history);
    const prompt = summarizer.calls[0]!.messages.map((m) => m.contents.map((c) => (c.kind === 'text' ? c.text : '')).join('')).join('\n');
    expect(prompt).to.contain('assistant: [called everything/echo({"message":"summed up"})] [result: Echo: summed up] echo returned: Echo: summed up');
    expect(prompt).not.to.contain('hosted-mcp');
  });

  it('a Chat Completions agent given a history with hosted calls sends the text only', async () => {
    const reply = await agentWith(false).run('call echo {"message":"elsewhere"}');
    const chat = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-4.1' }) });
    const history: ChatMessage[] = [{ role: 'user', contents: [{ kind: 'text', text: 'call echo {"message":"elsewhere"}' }] }, ...reply.messages];
    await chat.run([...history, { role: 'user', contents: [{ kind: 'text', text: 'Go on.' }] }]);
    const sent = (emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { messages: Record<string, unknown>[] }).messages;
    expect(sent).to.deep.equal([
      { role: 'user', content: 'call echo {"message":"elsewhere"}' },
      { role: 'assistant', content: 'echo returned: Echo: elsewhere' },
      { role: 'user', content: 'Go on.' },
    ]);
  });
});
