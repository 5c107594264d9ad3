import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Container } from 'inversify';
import { type AIAgent, ChatAgent, ConfigurationError, agentToken, createContainer, messageText, tool } from 'skein';
import OpenAI from 'openai';
import { OpenAIAssistantAgent, OpenAIChatClient, openaiPlugin } from 'skein/openai';
import { z } from 'zod';
import { InMemoryMcpThreadStore, McpAgentServer } from 'skein/mcp';
import { Emulator } from 'skein/testing';
import { FAULT_SERVER, marks, tempDir } from './mcp-fixtures.js';
import { useEmulator } from '../support/emulator.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/cli/main.js');

interface AskResult {
  content: { type: string; text: string }[];
  structuredContent?: { reply: string; thread: string };
  isError?: boolean;
}

async function ask(client: Client, args: Record<string, unknown>, tool = 'ask_helper'): Promise<AskResult> {
  return (await client.callTool({ name: tool, arguments: args })) as AskResult;
}

/** What any MCP client does to hold a conversation with a Skein agent. */
async function converse(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).to.deep.equal(['ask_helper']);
  expect(tools[0]!.inputSchema).to.deep.include({ required: ['input'] });
  const first = await ask(client, { input: 'My name is Ada.' });
  expect(first.isError).to.not.equal(true);
  expect(first.structuredContent!.reply).to.equal('Nice to meet you, Ada!');
  const thread = first.structuredContent!.thread;
  const second = await ask(client, { input: 'What is my name?', thread });
  expect(second.structuredContent).to.deep.equal({ reply: 'Your name is Ada.', thread });
  expect(second.content[0]!.text).to.equal('Your name is Ada.');
  const fresh = await ask(client, { input: 'What is my name?' });
  expect(fresh.structuredContent!.reply).to.equal("I don't know your name yet.");
  expect(fresh.structuredContent!.thread).to.not.equal(thread);
  return thread;
}

describe('skein/mcp: Skein agents served over MCP (McpAgentServer, skein mcp serve)', () => {
  const emu = useEmulator();
  let dir: string;
  let configFile: string;
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async () => {
    dir = await tempDir();
    configFile = path.join(dir, 'skein.yaml');
    await writeFile(
      configFile,
      `plugins:\n  openai: { apiKey: k, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }\nagents:\n  helper: { client: openai-chat, model: gpt-4.1, description: answers questions }\n`,
    );
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('McpAgentServer over Streamable HTTP: a multi-turn conversation through the SDK client', async () => {
    const container: Container = await createContainer(configFile);
    const server = new McpAgentServer({ agents: { helper: container.get<AIAgent>(agentToken('helper')) } });
    const url = await server.listenHttp();
    cleanups.push(() => server.close());
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanups.push(() => client.close());
    await converse(client);

    const unknown = await ask(client, { input: 'hi', thread: 'no-such-thread' });
    expect(unknown.isError).to.equal(true);
    expect(unknown.content[0]!.text).to.contain('No thread "no-such-thread"');
    const bad = await ask(client, { input: 42 });
    expect(bad.isError).to.equal(true);
    expect(bad.content[0]!.text).to.contain('"input" must be a string');
  });

  it('runs the shared local request guard: foreign Host or Origin is 403, allowed hosts pass, non-loopback needs expose', async () => {
    const container: Container = await createContainer(configFile);
    const server = new McpAgentServer({ agents: { helper: container.get<AIAgent>(agentToken('helper')) } });
    const url = await server.listenHttp({ allowedHosts: ['devbox.local'] });
    cleanups.push(() => server.close());
    const port = new URL(url).port;
    const { request } = await import('node:http');
    const post = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      });
    const rebound = await post({ host: `evil.example:${port}` });
    expect(rebound.status).to.equal(403);
    expect(rebound.body).to.contain('evil.example');
    expect((await post({ origin: 'http://evil.example' })).status).to.equal(403);
    const allowed = await post({ host: `devbox.local:${port}` });
    expect(allowed.status).to.equal(200);
    expect(allowed.body).to.contain('ask_helper');

    const exposed = await new McpAgentServer({ agents: { helper: container.get<AIAgent>(agentToken('helper')) } }).listenHttp({ host: '0.0.0.0' }).catch((e: unknown) => e);
    expect(exposed).to.be.instanceOf(ConfigurationError);
    expect((exposed as Error).message).to.contain('--expose');
  });

  describe('approvals over MCP', () => {
    let opened: number;
    let client: Client;
    type Asked = AskResult & { structuredContent: { reply: string; thread: string; approvalRequests?: { callId: string; name: string; arguments: string }[] } };

    beforeEach(async () => {
      opened = 0;
      const secret = tool({ name: 'open_vault', parameters: z.object({}), requiresApproval: true, execute: () => `opened ${++opened}` });
      const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: [secret] });
      const server = new McpAgentServer({ agents: { vault: agent } });
      const url = await server.listenHttp();
      cleanups.push(() => server.close());
      client = new Client({ name: 'test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      cleanups.push(() => client.close());
    });

    it('reports approval requests with their call ids and says how to answer them', async () => {
      const { tools } = await client.listTools();
      expect(Object.keys((tools[0]!.inputSchema as { properties: object }).properties)).to.include('approvals');
      const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
      const [request] = asked.structuredContent.approvalRequests!;
      expect(request).to.include({ name: 'open_vault' });
      expect(asked.content[0]!.text).to.contain('needs approval').and.contain(request!.callId).and.contain('"approvals"');
      expect(opened).to.equal(0);
    });

    it('an approval answered through "approvals" runs the tool once and the agent goes on', async () => {
      const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
      const { thread } = asked.structuredContent;
      const callId = asked.structuredContent.approvalRequests![0]!.callId;
      const answered = (await ask(client, { input: '', thread, approvals: [{ callId, approved: true }] }, 'ask_vault')) as Asked;
      expect(answered.isError).to.not.equal(true);
      expect(opened).to.equal(1);
      expect(answered.structuredContent.approvalRequests).to.equal(undefined);
      expect(answered.structuredContent.reply).to.contain('opened 1');
      const again = await ask(client, { input: '', thread, approvals: [{ callId, approved: true }] }, 'ask_vault');
      expect(again.isError).to.equal(true);
      expect(again.content[0]!.text).to.contain(`"${callId}"`).and.contain('waiting: none');
      expect(opened).to.equal(1);
    });

    it('a rejection never runs the tool; the model hears the reason', async () => {
      const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
      const callId = asked.structuredContent.approvalRequests![0]!.callId;
      const rejected = (await ask(client, { input: '', thread: asked.structuredContent.thread, approvals: [{ callId, approved: false, reason: 'not today' }] }, 'ask_vault')) as Asked;
      expect(rejected.isError).to.not.equal(true);
      expect(opened).to.equal(0);
      const sent = JSON.stringify(emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.body);
      expect(sent).to.contain('not today');
    });

    it('bad answers are isError results that change nothing: unknown call id, no thread, wrong shape', async () => {
      const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
      const { thread } = asked.structuredContent;
      const callId = asked.structuredContent.approvalRequests![0]!.callId;
      const unknown = await ask(client, { input: '', thread, approvals: [{ callId: 'nope', approved: true }] }, 'ask_vault');
      expect(unknown.isError).to.equal(true);
      expect(unknown.content[0]!.text).to.contain('"nope"').and.contain(callId);
      const noThread = await ask(client, { input: '', approvals: [{ callId, approved: true }] }, 'ask_vault');
      expect(noThread.isError).to.equal(true);
      expect(noThread.content[0]!.text).to.contain('"thread"');
      const badShape = await ask(client, { input: '', thread, approvals: [{ callId, approved: 'yes' }] }, 'ask_vault');
      expect(badShape.isError).to.equal(true);
      expect(badShape.content[0]!.text).to.contain('"approved": boolean');
      const empty = await ask(client, { input: '', thread }, 'ask_vault');
      expect(empty.isError).to.equal(true);
      expect(opened).to.equal(0);
      // The request is still waiting after all that: answering it now works.
      const answered = (await ask(client, { input: '', thread, approvals: [{ callId, approved: true }] }, 'ask_vault')) as Asked;
      expect(answered.isError).to.not.equal(true);
      expect(opened).to.equal(1);
    });

    it('a model failure after an approved call ran: the call is not run again; the next message goes on from its result', async () => {
      const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
      const { thread } = asked.structuredContent;
      const callId = asked.structuredContent.approvalRequests![0]!.callId;
      emu.emulator.injectFault({ kind: 'status', status: 500, times: 1, path: '/v1/chat/completions' });
      const failed = await ask(client, { input: '', thread, approvals: [{ callId, approved: true }] }, 'ask_vault');
      expect(failed.isError, JSON.stringify(failed)).to.equal(true);
      expect(opened).to.equal(1);
      const again = await ask(client, { input: '', thread, approvals: [{ callId, approved: true }] }, 'ask_vault');
      expect(again.isError).to.equal(true);
      expect(again.content[0]!.text).to.contain('waiting: none');
      const next = (await ask(client, { input: 'What happened?', thread }, 'ask_vault')) as Asked;
      expect(next.isError).to.not.equal(true);
      expect(opened).to.equal(1);
    });

    it('a new message instead of an answer declines the calls', async () => {
      const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
      const next = await ask(client, { input: 'never mind', thread: asked.structuredContent.thread }, 'ask_vault');
      expect(next.isError).to.not.equal(true);
      expect(next.structuredContent!.reply).to.contain('never mind');
      expect(opened).to.equal(0);
    });
  });

  it('a body over 4 MiB is a 413 JSON-RPC error that closes the connection; the server goes on serving', async () => {
    const container: Container = await createContainer(configFile);
    const server = new McpAgentServer({ agents: { helper: container.get<AIAgent>(agentToken('helper')) } });
    const url = await server.listenHttp();
    cleanups.push(() => server.close());
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(4 * 1024 * 1024) } });
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: big });
    expect(res.status).to.equal(413);
    expect(res.headers.get('connection')).to.equal('close');
    expect(await res.json()).to.deep.equal({ jsonrpc: '2.0', error: { code: -32600, message: `The body is ${Buffer.byteLength(big)} bytes; this server accepts at most ${4 * 1024 * 1024}.` }, id: null });
    const client = new Client({ name: 'after-413', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect((await client.listTools()).tools.map((t) => t.name)).to.include('ask_helper');
    await client.close();
  });

  it('calls on one thread at the same time take turns: both turns are kept, in order', async () => {
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { helper: { client: 'openai-chat', model: 'gpt-4.1' } },
    });
    const agent = container.get<AIAgent>(agentToken('helper'));
    const threads = new InMemoryMcpThreadStore();
    const server = new McpAgentServer({ agents: { helper: agent }, threads });
    const url = await server.listenHttp();
    cleanups.push(() => server.close());
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanups.push(() => client.close());
    const first = await ask(client, { input: 'My name is Ada.' });
    const thread = first.structuredContent!.thread;
    const replies = await Promise.all(['one', 'two', 'three'].map((word) => ask(client, { input: `Remember the word ${word}.`, thread })));
    expect(replies.every((r) => r.isError !== true)).to.equal(true);
    const saved = await agent.deserializeThread((await threads.load(thread))!);
    const users = (await saved.messageStore!.listMessages()).filter((m) => m.role === 'user').map(messageText);
    expect(users).to.have.length(4);
    expect(users[0]).to.equal('My name is Ada.');
    expect([...users.slice(1)].sort()).to.deep.equal(['Remember the word one.', 'Remember the word three.', 'Remember the word two.']);
  });

  it('skein mcp serve: an approval asked in one process is answered in the next (thread registry); the MCP tool runs once', async () => {
    const markFile = path.join(dir, 'approval-marks');
    const approvalConfig = path.join(dir, 'approval.yaml');
    await writeFile(
      approvalConfig,
      [
        'plugins:',
        `  openai: { apiKey: k, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }`,
        '  mcp:',
        '    servers:',
        `      counter: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(FAULT_SERVER)}, normal], env: { MARK_FILE: ${JSON.stringify(markFile)} }, requiresApproval: [pid] }`,
        'agents:',
        '  helper: { client: openai-chat, model: gpt-4.1, tools: [mcp:counter] }',
        '',
      ].join('\n'),
    );
    const threadsDir = path.join(dir, 'threads-approval');
    const serve = async () => {
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', 'serve', '--config', approvalConfig, '--agent', 'helper', '--threads-dir', threadsDir], env: getDefaultEnvironment(), stderr: 'pipe' }),
      );
      return client;
    };
    const pidCalls = async () => (await marks(markFile)).filter((m) => m === 'call pid').length;

    const first = await serve();
    const asked = (await ask(first, { input: 'call pid' })) as AskResult & { structuredContent: { approvalRequests?: { callId: string; name: string }[] } };
    await first.close();
    const request = asked.structuredContent.approvalRequests?.[0];
    expect(request?.name).to.equal('pid');
    expect(await pidCalls()).to.equal(0);

    const second = await serve();
    cleanups.push(() => second.close());
    const thread = asked.structuredContent!.thread;
    const answered = await ask(second, { input: '', thread, approvals: [{ callId: request!.callId, approved: true }] });
    expect(answered.isError, JSON.stringify(answered)).to.not.equal(true);
    expect(answered.structuredContent!.reply).to.contain('pid returned');
    expect(await pidCalls()).to.equal(1);
    const twice = await ask(second, { input: '', thread, approvals: [{ callId: request!.callId, approved: true }] });
    expect(twice.isError).to.equal(true);
    expect(await pidCalls()).to.equal(1);
  });

  it('skein mcp serve over stdio keeps threads in the thread registry', async () => {
    const threadsDir = path.join(dir, 'threads-stdio');
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', 'serve', '--config', configFile, '--agent', 'helper', '--threads-dir', threadsDir], env: getDefaultEnvironment(), stderr: 'pipe' }),
    );
    cleanups.push(() => client.close());
    const thread = await converse(client);
    const files = await readdir(threadsDir);
    expect(files).to.include(`${thread}.json`);
    const record = JSON.parse(await readFile(path.join(threadsDir, `${thread}.json`), 'utf8')) as { agent: string; thread: { $type: string } };
    expect(record.agent).to.equal('helper');
  });

  it('skein mcp serve with a sqlite message store: the registry keeps only the store key, the store the messages', async () => {
    const sqliteConfig = path.join(dir, 'sqlite.yaml');
    await writeFile(
      sqliteConfig,
      `plugins:\n  openai: { apiKey: k, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }\n  sqlite: { path: ${JSON.stringify(path.join(dir, 'threads.db'))} }\nagents:\n  helper: { client: openai-chat, model: gpt-4.1, messageStore: sqlite }\n`,
    );
    const threadsDir = path.join(dir, 'threads-sqlite');
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', 'serve', '--config', sqliteConfig, '--agent', 'helper', '--threads-dir', threadsDir], env: getDefaultEnvironment(), stderr: 'pipe' }),
    );
    cleanups.push(() => client.close());
    const thread = await converse(client);
    const saved = await readFile(path.join(threadsDir, `${thread}.json`), 'utf8');
    expect(saved).to.not.contain('Ada');
    const container: Container = await createContainer(sqliteConfig);
    const agent = container.get<AIAgent>(agentToken('helper'));
    const resumed = await agent.deserializeThread((JSON.parse(saved) as { thread: unknown }).thread);
    const texts = (await resumed.messageStore!.listMessages()).map((m) => m.contents.map((c) => (c.kind === 'text' ? c.text : '')).join(''));
    expect(texts).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!', 'What is my name?', 'Your name is Ada.']);
  });

  it('skein mcp serve --http --port 0 prints its URL and serves Streamable HTTP', async () => {
    const child: ChildProcess = spawn(process.execPath, [CLI, 'mcp', 'serve', '--config', configFile, '--agent', 'helper', '--http', '--port', '0', '--threads-dir', path.join(dir, 'threads-http')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const found = /at (http:\/\/\S+)/.exec(out)?.[1];
        if (found) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`skein mcp serve exited with ${code}`)));
    });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanups.push(() => client.close());
    await converse(client);
  });

  it('skein mcp serve names a missing agent in a configuration error', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp', 'serve', '--config', configFile, '--agent', 'nobody'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).to.equal(1);
    expect(stderr).to.contain('agents.nobody').and.contain('defines no agent named "nobody"');
  });
});

/** Issue 28 §2: an Assistants agent served over MCP asks first too; the tool runs once when approved, never when rejected. */
describe('skein/mcp: approvals over MCP for an openai-assistants agent', () => {
  let emulator: Emulator;
  let client: Client;
  let server: McpAgentServer;
  let opened: number;
  type Asked = AskResult & { structuredContent: { reply: string; thread: string; approvalRequests?: { callId: string; name: string }[] } };

  beforeEach(async () => {
    opened = 0;
    emulator = await Emulator.start();
    const secret = tool({ name: 'open_vault', parameters: z.object({}), requiresApproval: true, execute: () => `opened ${++opened}` });
    const openai = new OpenAI({ apiKey: 'k', baseURL: emulator.openaiBaseURL, maxRetries: 0 });
    const agent = await OpenAIAssistantAgent.create(openai, { model: 'gpt-4.1', name: 'vault' }, { tools: [secret], polling: { intervalMs: 1 } });
    server = new McpAgentServer({ agents: { vault: agent } });
    const url = await server.listenHttp();
    client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  });
  afterEach(async () => {
    await client.close();
    await server.close();
    await emulator.stop();
  });

  it('asks instead of running; approved, the tool runs exactly once and the model reads its result', async () => {
    const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
    expect(opened).to.equal(0);
    const callId = asked.structuredContent.approvalRequests![0]!.callId;
    const answered = (await ask(client, { input: '', thread: asked.structuredContent.thread, approvals: [{ callId, approved: true }] }, 'ask_vault')) as Asked;
    expect(answered.isError).to.not.equal(true);
    expect(opened).to.equal(1);
    expect(answered.structuredContent.reply).to.equal('open_vault returned: opened 1');
    const again = await ask(client, { input: '', thread: asked.structuredContent.thread, approvals: [{ callId, approved: true }] }, 'ask_vault');
    expect(again.isError).to.equal(true);
    expect(opened).to.equal(1);
  });

  it('rejected, the tool never runs and the model reads why', async () => {
    const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as Asked;
    const callId = asked.structuredContent.approvalRequests![0]!.callId;
    const rejected = (await ask(client, { input: '', thread: asked.structuredContent.thread, approvals: [{ callId, approved: false, reason: 'not today' }] }, 'ask_vault')) as Asked;
    expect(opened).to.equal(0);
    expect(rejected.structuredContent.reply).to.equal('open_vault returned: not run: the user rejected this call: not today.');
  });
});
