import { expect } from 'chai';
import path from 'node:path';
import { AbortError, type AITool, type FunctionResultContent } from 'skein';
import { McpConnectionError, McpError, McpTimeoutError, type McpServer, mcpServer } from 'skein/mcp';
import { EverythingHttp, GARBAGE_REPLIES, GarbageHttp, everythingStdio, faultServer, marks, tempDir } from './mcp-fixtures.js';

async function call(tools: readonly AITool[], name: string, args: unknown = {}, signal = new AbortController().signal): Promise<FunctionResultContent> {
  const tool = tools.find((t) => t.declaration.name === name);
  if (!tool) throw new Error(`no tool ${name} among ${tools.map((t) => t.declaration.name).join(', ')}`);
  return tool.invoke({ call: { kind: 'function-call', callId: 'call-1', name, arguments: JSON.stringify(args) }, signal });
}

describe('skein/mcp: MCP server tools (server-everything, over stdio and Streamable HTTP)', () => {
  let http: EverythingHttp;
  const servers: McpServer[] = [];
  const track = (server: McpServer) => (servers.push(server), server);

  before(async () => {
    http = await EverythingHttp.start();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  after(() => http.stop());

  for (const transport of ['stdio', 'streamable-http'] as const) {
    const make = (extra: object = {}) =>
      track(mcpServer({ name: 'everything', ...(transport === 'stdio' ? everythingStdio() : { url: http.url }), ...extra }));

    describe(transport, () => {
      it('lists every tool with the server JSON Schema as parameters', async () => {
        const tools = await make().listTools();
        const names = tools.map((t) => t.declaration.name);
        expect(names).to.include.members(['echo', 'get-sum', 'get-tiny-image', 'get-structured-content', 'get-resource-links', 'trigger-long-running-operation']);
        const sum = tools.find((t) => t.declaration.name === 'get-sum')!;
        expect(sum.declaration.description).to.equal('Returns the sum of two numbers');
        expect(sum.declaration.parameters).to.deep.include({ type: 'object', required: ['a', 'b'] });
        expect(sum.declaration.parameters).to.not.have.property('$schema');
      });

      it('maps text, images, structured content, embedded resources and resource links', async () => {
        const tools = await make().listTools();
        expect((await call(tools, 'echo', { message: 'hello' })).result).to.equal('Echo: hello');
        expect((await call(tools, 'get-sum', { a: 2, b: 40 })).result).to.equal('The sum of 2 and 40 is 42.');

        const image = await call(tools, 'get-tiny-image');
        const content = (image.result as { content: { type: string }[] }).content;
        expect(content.map((c) => c.type)).to.deep.equal(['text', 'image', 'text']);
        expect(content[1]).to.deep.include({ type: 'image', mimeType: 'image/png' });
        const data = (image.additionalProperties!.mcpData as { mediaType: string; data: string }[])[0]!;
        expect(data.mediaType).to.equal('image/png');
        expect(Buffer.from(data.data, 'base64').subarray(1, 4).toString()).to.equal('PNG');

        const structured = await call(tools, 'get-structured-content', { location: 'New York' });
        expect((structured.result as { structuredContent: object }).structuredContent).to.have.keys('temperature', 'conditions', 'humidity');

        const links = await call(tools, 'get-resource-links', { count: 2 });
        const linkItems = (links.result as { content: { type: string; uri?: string }[] }).content.filter((c) => c.type === 'resource_link');
        expect(linkItems).to.have.length(2);
        expect(linkItems[0]!.uri).to.match(/^demo:\/\/resource\//);

        const embedded = await call(tools, 'get-resource-reference', { resourceType: 'Text', resourceId: 1 });
        const resource = (embedded.result as { content: { type: string; text?: string }[] }).content.find((c) => c.type === 'resource')!;
        expect(resource.text).to.contain('Resource 1');
      });

      it('gives the model an error result when the server reports isError (bad arguments)', async () => {
        const result = await call(await make().listTools(), 'get-sum', { a: 'one' });
        expect(result.result).to.equal(undefined);
        expect(result.error).to.be.a('string').and.match(/a|number|invalid/i);
      });

      it('applies allow and deny lists, a prefix, and requiresApproval by name', async () => {
        const tools = await make({ allowTools: ['get-*', 'echo'], denyTools: ['get-env'], toolPrefix: 'ev_', requiresApproval: ['get-sum'] }).listTools();
        const names = tools.map((t) => t.declaration.name);
        expect(names).to.include.members(['ev_echo', 'ev_get-sum', 'ev_get-tiny-image']);
        expect(names).to.not.include('ev_get-env');
        expect(names.every((n) => n.startsWith('ev_'))).to.equal(true);
        expect(names).to.not.include('ev_trigger-long-running-operation');
        expect(tools.filter((t) => t.requiresApproval).map((t) => t.declaration.name)).to.deep.equal(['ev_get-sum']);
        expect((await call(tools, 'ev_echo', { message: 'x' })).result).to.equal('Echo: x');
      });

      it('times out a call with McpTimeoutError naming the server', async () => {
        const tools = await make({ timeoutMs: 300 }).listTools();
        const failure = await call(tools, 'trigger-long-running-operation', { duration: 30, steps: 3 }).catch((e: unknown) => e);
        expect(failure).to.be.instanceOf(McpTimeoutError);
        expect((failure as McpTimeoutError).server).to.equal('everything');
        expect((failure as Error).message).to.match(/MCP server "everything".*300 ms/);
      });

      it('aborting the run aborts the call in flight with AbortError, and the connection stays usable', async () => {
        const server = make();
        const tools = await server.listTools();
        const controller = new AbortController();
        const pending = call(tools, 'trigger-long-running-operation', { duration: 30, steps: 3 }, controller.signal);
        setImmediate(() => controller.abort());
        expect(await pending.catch((e: unknown) => e)).to.be.instanceOf(AbortError);
        expect((await call(tools, 'echo', { message: 'still here' })).result).to.equal('Echo: still here');
      });
    });
  }

  it('an HTTP server that went away is McpConnectionError; once it is back, the next call reconnects', async () => {
    let remote = await EverythingHttp.start();
    const port = Number(new URL(remote.url).port);
    try {
      const server = track(mcpServer({ name: 'remote', url: remote.url }));
      const tools = await server.listTools();
      expect((await call(tools, 'echo', { message: 'one' })).result).to.equal('Echo: one');
      await remote.stop();
      const failure = await call(tools, 'echo', { message: 'two' }).catch((e: unknown) => e);
      expect(failure).to.be.instanceOf(McpConnectionError);
      expect((failure as Error).message).to.contain(`MCP server "remote" (http://127.0.0.1:${port}/mcp)`);
      remote = await EverythingHttp.start('streamableHttp', port);
      const again = await server.listTools();
      expect((await call(again, 'echo', { message: 'three' })).result).to.equal('Echo: three');
    } finally {
      await remote.stop();
    }
  });

  it('falls back to the legacy SSE transport for a server that speaks only SSE', async () => {
    const sse = await EverythingHttp.start('sse');
    try {
      const server = track(mcpServer({ name: 'legacy', url: sse.url }));
      const tools = await server.listTools();
      expect((await call(tools, 'echo', { message: 'old' })).result).to.equal('Echo: old');
      await server.close();
    } finally {
      await sse.stop();
    }
  });

  it('a plain stdio server from the registry works too (server-filesystem)', async () => {
    const dir = await tempDir();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(dir, 'notes.txt'), 'remember the milk');
    const { FILESYSTEM } = await import('./mcp-fixtures.js');
    const tools = await track(mcpServer({ name: 'files', command: process.execPath, args: [FILESYSTEM, dir], allowTools: ['read_text_file', 'list_directory'] })).listTools();
    expect(tools.map((t) => t.declaration.name).sort()).to.deep.equal(['list_directory', 'read_text_file']);
    const read = await call(tools, 'read_text_file', { path: path.join(dir, 'notes.txt') });
    expect(JSON.stringify(read.result)).to.contain('remember the milk');
  });
});

describe('skein/mcp: faults (a tiny own server)', () => {
  const servers: McpServer[] = [];
  const track = (server: McpServer) => (servers.push(server), server);
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('lists every page of tools and makes odd names model-safe', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'marks');
    const tools = await track(mcpServer({ name: 'faults', ...faultServer('normal', { MARK_FILE: file }) })).listTools();
    expect(tools.map((t) => t.declaration.name)).to.deep.equal(['pid', 'slow', 'crash', 'add-tool', 'weird_name_v1']);
    expect((await marks(file)).filter((m) => m === 'list')).to.have.length(3);
    expect((await call(tools, 'weird_name_v1')).result).to.equal('ran weird.name/v1');
  });

  it('refreshes the list after notifications/tools/list_changed, for the next listing', async () => {
    const server = track(mcpServer({ name: 'faults', ...faultServer('normal') }));
    const before = await server.listTools();
    expect((await call(before, 'add-tool')).result).to.equal('added added-5');
    const after = await server.listTools();
    expect(after.map((t) => t.declaration.name)).to.include('added-5');
    expect((await call(after, 'added-5')).result).to.equal('ran added-5');
  });

  it('aborting sends MCP cancellation: the server sees the call cancelled', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'marks');
    const tools = await track(mcpServer({ name: 'faults', ...faultServer('normal', { MARK_FILE: file }) })).listTools();
    const controller = new AbortController();
    const pending = call(tools, 'slow', {}, controller.signal);
    while (!(await marks(file)).includes('call slow')) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect(await pending.catch((e: unknown) => e)).to.be.instanceOf(AbortError);
    while (!(await marks(file)).includes('cancelled')) await new Promise((r) => setTimeout(r, 20));
    expect(await marks(file)).to.include('cancelled');
  });

  it('a crash mid-call is McpConnectionError naming the server and command; the next call reconnects', async () => {
    const server = track(mcpServer({ name: 'faults', ...faultServer('normal', { SECRET_TOKEN: 'sk-very-secret' }) }));
    const tools = await server.listTools();
    const firstPid = (await call(tools, 'pid')).result;
    const failure = await call(tools, 'crash').catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(McpConnectionError);
    expect((failure as McpError).server).to.equal('faults');
    expect((failure as Error).message).to.contain('MCP server "faults"').and.contain('fault-server.js normal');
    expect((failure as Error).message).to.not.contain('sk-very-secret');
    const again = await server.listTools();
    const secondPid = (await call(again, 'pid')).result;
    expect(secondPid).to.be.a('string').and.not.equal(firstPid);
  });

  it('a server that exits at start is McpConnectionError with what it wrote to stderr', async () => {
    const failure = await track(mcpServer({ name: 'broken', ...faultServer('exit') })).listTools().catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(McpConnectionError);
    expect((failure as Error).message).to.contain('MCP server "broken"').and.contain('MISSING_SETTING is not set');
  });

  it('a command that does not exist is McpConnectionError naming the command', async () => {
    const failure = await track(mcpServer({ name: 'ghost', command: 'skein-no-such-mcp-server', args: ['--x'] })).listTools().catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(McpConnectionError);
    expect((failure as Error).message).to.contain('MCP server "ghost" (skein-no-such-mcp-server --x)');
  });

  // connectTimeoutMs is far beyond the test's own timeout (20 s): passing means the garbage, not the clock, ended the wait.
  it('a stdio server printing garbage instead of JSON-RPC fails at once with McpConnectionError, not after connectTimeoutMs', async () => {
    const failure = await track(mcpServer({ name: 'noisy', ...faultServer('garbage'), connectTimeoutMs: 60_000 })).listTools().catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(McpConnectionError);
    expect((failure as Error).message).to.contain('MCP server "noisy"').and.contain('fault-server.js garbage').and.contain('not a JSON-RPC message');
  });

  for (const [what, reply] of Object.entries(GARBAGE_REPLIES)) {
    it(`an HTTP endpoint answering ${what} fails at once with McpConnectionError, not after connectTimeoutMs`, async () => {
      const garbage = await GarbageHttp.start(reply);
      try {
        const failure = await track(mcpServer({ name: 'junk', url: garbage.url, connectTimeoutMs: 60_000 })).listTools().catch((e: unknown) => e);
        expect(failure).to.be.instanceOf(McpConnectionError);
        expect((failure as Error).message).to.contain(`MCP server "junk" (${garbage.url})`);
      } finally {
        await garbage.stop();
      }
    });
  }

  it('a slow start beyond connectTimeoutMs is McpTimeoutError; within it, the server works', async () => {
    const slow = await track(mcpServer({ name: 'slow', ...faultServer('slow-start', { START_DELAY_MS: '1500' }), connectTimeoutMs: 200 })).listTools().catch((e: unknown) => e);
    expect(slow).to.be.instanceOf(McpTimeoutError);
    const patient = await track(mcpServer({ name: 'slow', ...faultServer('slow-start', { START_DELAY_MS: '300' }) })).listTools();
    expect(patient.map((t) => t.declaration.name)).to.include('pid');
  });

  it('an unreachable HTTP server is McpConnectionError naming the URL without its credentials', async () => {
    const failure = await track(
      mcpServer({ name: 'remote', url: 'http://user:pw-secret@127.0.0.1:9/mcp?key=q-secret', headers: { Authorization: 'Bearer h-secret' }, connectTimeoutMs: 2000 }),
    )
      .listTools()
      .catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(McpConnectionError);
    const message = (failure as Error).message;
    expect(message).to.contain('MCP server "remote" (http://127.0.0.1:9/mcp)');
    for (const secret of ['pw-secret', 'q-secret', 'h-secret']) expect(message).to.not.contain(secret);
  });
});
