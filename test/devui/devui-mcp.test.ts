import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EverythingHttp, marks } from '../mcp/mcp-fixtures.js';
import { readSse, startFixture, type DevUIFixture, type SseEvent } from './devui-fixture.js';
import { writeMcpConfig } from './devui-mcp-config.js';

interface ToolInfo {
  name: string;
  description?: string;
  parameters: { type: string; properties: Record<string, { type: string }>; required?: string[] };
  requiresApproval: boolean;
  source?: { kind: string; server?: string; name?: string };
}
interface Span {
  name: string;
  operation?: string;
  toolName?: string;
  toolArguments?: string;
  toolResult?: string;
  toolSource?: { kind: string; server?: string; name?: string };
  attributes: Record<string, unknown>;
}

/** Issue 18: the Dev UI shows an agent's MCP tools, their calls, approvals and traces like local ones. */
describe('Dev UI with MCP tools (HTTP API, server-everything and a stdio counting server)', function () {
  this.timeout(60_000);
  let fx: DevUIFixture;
  let dir: string;
  let markFile: string;
  let hostedServer: EverythingHttp;

  before(async () => {
    hostedServer = await EverythingHttp.start();
  });
  after(async () => {
    await hostedServer.stop();
  });
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-mcp-'));
    markFile = path.join(dir, 'marks');
    fx = await startFixture({ config: await writeMcpConfig(dir, markFile, hostedServer.url) });
  });
  afterEach(async () => {
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  });

  const json = async <T>(route: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
    const response = await fx.fetch(route, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
    return { status: response.status, body: (await response.json()) as T };
  };
  const chat = async (body: Record<string, unknown>): Promise<SseEvent[]> => {
    const response = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return readSse(response);
  };
  const runTool = (agent: string, tool: string, args: unknown, answer: { approved?: boolean } = {}) =>
    json<{ result?: unknown; error?: string }>(`/api/agents/${agent}/tools/${tool}`, { method: 'POST', body: JSON.stringify({ arguments: args, ...answer }) });
  const textOf = (events: SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('');
  const pidCalls = async () => (await marks(markFile)).filter((m) => m === 'call pid').length;

  it("lists the agent's MCP tools after its local ones, with their server, schema and approval; a server that cannot start is reported beside the rest", async () => {
    const { status, body } = await json<{ tools: ToolInfo[]; toolSetErrors?: unknown }>('/api/agents/helper/tools');
    expect(status).to.equal(200);
    expect(body.tools.map((t) => [t.name, t.requiresApproval, t.source])).to.deep.equal([
      ['get_weather', false, undefined],
      ['echo', false, { kind: 'mcp', server: 'everything', name: 'echo' }],
      ['get-sum', false, { kind: 'mcp', server: 'everything', name: 'get-sum' }],
      ['get-tiny-image', false, { kind: 'mcp', server: 'everything', name: 'get-tiny-image' }],
      ['c_pid', true, { kind: 'mcp', server: 'counter', name: 'pid' }],
    ]);
    const echo = body.tools[1]!;
    expect(echo.description).to.be.a('string').and.not.equal('');
    expect(echo.parameters).to.deep.include({ type: 'object', required: ['message'] });
    expect(echo.parameters.properties.message!.type).to.equal('string');
    expect(body.toolSetErrors).to.equal(undefined);

    const broken = await json<{ tools: ToolInfo[]; toolSetErrors: { toolSet: string; name: string; message: string }[] }>('/api/agents/broken/tools');
    expect(broken.status).to.equal(200);
    expect(broken.body.tools.map((t) => t.name)).to.deep.equal(['get_weather']);
    expect(broken.body.toolSetErrors).to.have.length(1);
    expect(broken.body.toolSetErrors[0]).to.include({ toolSet: 'mcp:dead', name: 'McpConnectionError' });
    expect(broken.body.toolSetErrors[0]!.message).to.contain('MCP server "dead"').and.contain('MISSING_SETTING is not set');
  });

  it('a chat turn streams an MCP call and its result as it does a local one; the thread and the trace keep them, the trace naming the server', async () => {
    const local = await chat({ agent: 'helper', text: 'call get_weather {"city":"Oslo"}' });
    const events = await chat({ agent: 'helper', text: 'call echo {"message":"over MCP"}' });
    const kinds = (list: SseEvent[]) => list.map((e) => e.event).filter((e) => e !== 'delta');
    expect(kinds(events)).to.deep.equal(kinds(local));
    expect(kinds(events)).to.deep.equal(['run', 'tool-call', 'tool-result', 'trace', 'usage', 'done']);
    const call = events.find((e) => e.event === 'tool-call')!.data;
    expect(call).to.include({ name: 'echo', arguments: '{"message":"over MCP"}', authorName: 'helper' });
    expect(events.find((e) => e.event === 'tool-result')!.data).to.deep.equal({ callId: call.callId, result: 'Echo: over MCP' });
    expect(textOf(events)).to.equal('echo returned: Echo: over MCP');

    const saved = events.find((e) => e.event === 'done')!.data.thread as { id: string };
    const { body } = await json<{ messages: { role: string; contents: { kind: string; name?: string; result?: unknown }[] }[] }>(`/api/threads/${saved.id}`);
    expect(body.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(body.messages[1]!.contents[0]).to.include({ kind: 'function-call', name: 'echo' });
    expect(body.messages[2]!.contents[0]).to.include({ kind: 'function-result', result: 'Echo: over MCP' });

    const spans = (events.find((e) => e.event === 'trace')!.data.trace as { spans: Span[] }).spans;
    expect(spans.map((s) => s.name)).to.deep.equal(['invoke_agent helper', 'chat gpt-4.1-mini', 'execute_tool echo', 'chat gpt-4.1-mini']);
    const tool = spans[2]!;
    expect(tool).to.deep.include({ operation: 'execute_tool', toolName: 'echo', toolSource: { kind: 'mcp', server: 'everything', name: 'echo' } });
    expect(tool.attributes).to.deep.include({ 'skein.tool.source.kind': 'mcp', 'skein.tool.source.server': 'everything', 'skein.tool.source.name': 'echo' });
    expect(JSON.parse(tool.toolArguments!)).to.deep.equal({ message: 'over MCP' });
    expect(tool.toolResult).to.equal('"Echo: over MCP"');
    // A local tool's span has no source.
    const localTool = (local.find((e) => e.event === 'trace')!.data.trace as { spans: Span[] }).spans.find((s) => s.operation === 'execute_tool')!;
    expect(localTool.toolSource).to.equal(undefined);
    // The thread's traces list the same spans.
    const traces = await json<{ traces: { spans: Span[] }[] }>(`/api/threads/${saved.id}/traces`);
    expect(traces.body.traces[0]!.spans[2]!.toolSource).to.deep.equal({ kind: 'mcp', server: 'everything', name: 'echo' });
  });

  it('an MCP tool that requires approval waits, survives a restart of the Dev UI, runs once when approved, and a second answer is refused', async () => {
    const events = await chat({ agent: 'helper', text: 'call c_pid' });
    const request = events.find((e) => e.event === 'approval-request')!.data;
    expect(request).to.include({ name: 'c_pid', arguments: '{}' });
    expect(events.some((e) => e.event === 'tool-result')).to.equal(false);
    const saved = events.find((e) => e.event === 'done')!.data.thread as { id: string; pendingApprovals: number };
    expect(saved.pendingApprovals).to.equal(1);
    expect(await pidCalls()).to.equal(0);

    await fx.restart();
    const reopened = await json<{ pendingApprovals: unknown[] }>(`/api/threads/${saved.id}`);
    expect(reopened.body.pendingApprovals).to.deep.equal([{ callId: request.callId, name: 'c_pid', arguments: '{}' }]);

    const approved = await chat({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] });
    const result = approved.find((e) => e.event === 'tool-result')!.data;
    expect(result.callId).to.equal(request.callId);
    expect(result.result).to.match(/^\d+$/);
    expect(textOf(approved)).to.equal(`c_pid returned: ${result.result as string}`);
    expect(await pidCalls()).to.equal(1);
    const tool = (approved.find((e) => e.event === 'trace')!.data.trace as { spans: Span[] }).spans.find((s) => s.operation === 'execute_tool')!;
    expect(tool.toolSource).to.deep.equal({ kind: 'mcp', server: 'counter', name: 'pid' });

    const again = await json<{ error: { message: string } }>('/api/chat', { method: 'POST', body: JSON.stringify({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] }) });
    expect(again.status).to.equal(409);
    expect(await pidCalls()).to.equal(1);
  });

  it('a rejected MCP call never reaches the server', async () => {
    const events = await chat({ agent: 'helper', text: 'call c_pid' });
    const request = events.find((e) => e.event === 'approval-request')!.data;
    const threadId = (events.find((e) => e.event === 'done')!.data.thread as { id: string }).id;
    const rejected = await chat({ threadId, approvals: [{ callId: request.callId, approved: false, reason: 'not now' }] });
    expect(rejected.find((e) => e.event === 'tool-result')!.data.error).to.equal('not run: the user rejected this call: not now.');
    expect(await pidCalls()).to.equal(0);
  });

  it('runs MCP tools by hand like local ones: result, the server\'s refusal as the tool error, approval tools only when approved; no model call', async () => {
    const echo = await runTool('helper', 'echo', { message: 'by hand' });
    expect(echo.status).to.equal(200);
    expect(echo.body).to.deep.include({ tool: 'echo', result: 'Echo: by hand' });

    const refused = await runTool('helper', 'get-sum', { a: 'two', b: 2 });
    expect(refused.status).to.equal(200);
    expect(refused.body.error).to.match(/expected number/);

    const unapproved = await runTool('helper', 'c_pid', {});
    expect(unapproved.status).to.equal(409);
    expect(await pidCalls()).to.equal(0);
    const pid = await runTool('helper', 'c_pid', {}, { approved: true });
    expect(pid.body.result).to.match(/^\d+$/);
    expect(await pidCalls()).to.equal(1);

    const image = await runTool('helper', 'get-tiny-image', {});
    expect(image.body.result).to.deep.include({ content: [
      { type: 'text', text: "Here's the image you requested:" },
      { type: 'image', mimeType: 'image/png', bytes: 4033 },
      { type: 'text', text: 'The image above is the MCP logo.' },
    ] });
    expect(fx.emulator.requests).to.deep.equal([]);

    const unknown = await runTool('helper', 'launch_rocket', {});
    expect(unknown.status).to.equal(404);
    expect((unknown.body as unknown as { error: { message: string } }).error.message).to.equal('Agent "helper" has no tool "launch_rocket"; its tools: get_weather, echo, get-sum, get-tiny-image, c_pid.');
    // A tool of a server that cannot be listed: the server's failure, not a wrong name.
    const down = await runTool('broken', 'anything', {});
    expect(down.status).to.equal(502);
    const error = (down.body as unknown as { error: { name: string; message: string } }).error;
    expect(error.name).to.equal('ToolSetUnavailableError');
    expect(error.message).to.contain('mcp:dead (McpConnectionError: MCP server "dead"');
  });

  it('closing the Dev UI stops the MCP servers its agents started', async () => {
    const pid = Number((await runTool('helper', 'c_pid', {}, { approved: true })).body.result);
    expect(() => process.kill(pid, 0)).to.not.throw();
    await fx.restart();
    expect(() => process.kill(pid, 0)).to.throw();
    // The new Dev UI starts the server again on first use.
    expect(Number((await runTool('helper', 'c_pid', {}, { approved: true })).body.result)).to.not.equal(pid);
  });

  it('the calls the service made on a hosted MCP server stream, and are kept, as a call and its result naming the server', async () => {
    const events = await chat({ agent: 'hosted', text: 'call echo {"message":"hosted"}' });
    const call = events.find((e) => e.event === 'tool-call')!.data;
    expect(call).to.include({ name: 'echo', arguments: '{"message":"hosted"}', hostedServer: 'everything' });
    expect(call.callId).to.match(/^mcp_/);
    expect(events.find((e) => e.event === 'tool-result')!.data).to.deep.equal({ callId: call.callId, result: 'Echo: hosted' });
    expect(textOf(events)).to.equal('echo returned: Echo: hosted');
    const tool = (events.find((e) => e.event === 'trace')!.data.trace as { spans: Span[] }).spans.find((s) => s.operation === 'execute_tool')!;
    expect(tool.toolSource).to.deep.include({ kind: 'mcp', server: 'everything' });

    // Reopened, the thread shows the same call (the Dev UI's transcript of a service thread).
    const threadId = (events.find((e) => e.event === 'done')!.data.thread as { id: string }).id;
    const { body } = await json<{ messages: { contents: { kind: string; name?: string; serverLabel?: string; result?: string }[] }[] }>(`/api/threads/${threadId}`);
    const hosted = body.messages.flatMap((m) => m.contents).find((c) => c.kind === 'hosted-mcp-call');
    expect(hosted).to.include({ name: 'echo', serverLabel: 'everything', result: 'Echo: hosted' });

    // A call the service asks to approve is answered from the Dev UI like a local one.
    const asked = await chat({ threadId, text: 'call get-sum {"a":19,"b":23}' });
    const request = asked.find((e) => e.event === 'approval-request')!.data;
    expect(request).to.include({ name: 'get-sum', arguments: '{"a":19,"b":23}' });
    const approved = await chat({ threadId, approvals: [{ callId: request.callId, approved: true }] });
    expect(approved.find((e) => e.event === 'tool-call')!.data).to.include({ name: 'get-sum', hostedServer: 'everything' });
    expect(approved.find((e) => e.event === 'tool-result')!.data.result).to.equal('The sum of 19 and 23 is 42.');
  });

  it('a chat turn whose MCP server cannot start ends with an McpConnectionError naming it, and saves nothing', async () => {
    const events = await chat({ agent: 'broken', text: 'call get_weather {"city":"Rome"}' });
    const failure = events.find((e) => e.event === 'error')!.data;
    expect(failure.name).to.equal('McpConnectionError');
    expect(failure.message).to.contain('MCP server "dead"').and.contain('MISSING_SETTING is not set');
    expect(events.some((e) => e.event === 'tool-call')).to.equal(false);
    expect((await json<{ threads: unknown[] }>('/api/threads')).body.threads).to.deep.equal([]);
  });
});
