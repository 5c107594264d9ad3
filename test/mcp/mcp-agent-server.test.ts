import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Container } from 'inversify';
import { type AIAgent, ChatAgent, ConfigurationError, agentToken, createContainer, tool } from 'skein';
import { OpenAIChatClient } from 'skein/openai';
import { z } from 'zod';
import { McpAgentServer } from 'skein/mcp';
import { Emulator } from 'skein/testing';
import { tempDir } from './mcp-fixtures.js';

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
  let emulator: Emulator;
  let dir: string;
  let configFile: string;
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async () => {
    emulator = await Emulator.start();
    dir = await tempDir();
    configFile = path.join(dir, 'skein.yaml');
    await writeFile(
      configFile,
      `plugins:\n  openai: { apiKey: k, baseURL: "${emulator.openaiBaseURL}", maxRetries: 0 }\nagents:\n  helper: { client: openai-chat, model: gpt-4.1, description: answers questions }\n`,
    );
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  after(() => emulator.stop());

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

  it('reports approval requests (which MCP cannot answer) and the next message declines them', async () => {
    const secret = tool({ name: 'open_vault', parameters: z.object({}), requiresApproval: true, execute: () => 'opened' });
    const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: [secret] });
    const server = new McpAgentServer({ agents: { vault: agent } });
    const url = await server.listenHttp();
    cleanups.push(() => server.close());
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanups.push(() => client.close());
    const asked = (await ask(client, { input: 'call open_vault' }, 'ask_vault')) as AskResult & { structuredContent: { approvalRequests?: { name: string }[] } };
    expect(asked.structuredContent.approvalRequests!.map((r) => r.name)).to.deep.equal(['open_vault']);
    expect(asked.content[0]!.text).to.contain('needs approval');
    const next = await ask(client, { input: 'never mind', thread: asked.structuredContent.thread }, 'ask_vault');
    expect(next.isError).to.not.equal(true);
    expect(next.structuredContent!.reply).to.contain('never mind');
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
      `plugins:\n  openai: { apiKey: k, baseURL: "${emulator.openaiBaseURL}", maxRetries: 0 }\n  sqlite: { path: ${JSON.stringify(path.join(dir, 'threads.db'))} }\nagents:\n  helper: { client: openai-chat, model: gpt-4.1, messageStore: sqlite }\n`,
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
