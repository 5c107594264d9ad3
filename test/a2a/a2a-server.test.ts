import 'reflect-metadata';
import { type Message, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { ContentTypeNotSupportedError, fromJsonRpcErrorResponse, fromRestErrorBody } from '@a2a-js/sdk/errors';
import type { User } from '@a2a-js/sdk/server';
import { expect } from 'chai';
import express from 'express';
import { type IncomingMessage, type Server, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { type AIAgent, type AITool, ChatAgent, ConfigurationError, approvalResponse } from 'skein';
import { A2AAgent, A2ARunResponse, A2AServer, InMemoryA2AContextStore, partsText } from 'skein/a2a';
import { OpenAIAssistantAgent, OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { rejection } from '../support/async-expectations.js';
import { userMessage } from './remote-fixtures.js';
import { deleteFileTool } from '../support/example-tools.js';
import { useEmulator } from '../support/emulator.js';

function quietLogger() {
  const logged = { warnings: [] as string[], errors: [] as { message: string; error: unknown }[] };
  return { logged, logger: { warn: (m: string) => logged.warnings.push(m), error: (message: string, error: unknown) => logged.errors.push({ message, error }) } };
}

function chatAgent(emulator: Emulator, tools: ConstructorParameters<typeof ChatAgent>[0]['tools'] = []): ChatAgent {
  return new ChatAgent({
    chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
    name: 'ops',
    description: 'Runs operations.',
    tools,
  });
}

/** The SDK's own client, with a bearer token (or none) on every request. */
function sdkClient(cardBase: string, token?: string, preferred?: 'JSONRPC' | 'HTTP+JSON') {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('Authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: preferred ? [preferred] : undefined,
  });
  return new ClientFactory(options).createFromUrl(cardBase);
}

async function send(client: Awaited<ReturnType<typeof sdkClient>>, message: Message): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
  if ('messageId' in result) throw new Error(`expected a task, got a message: ${partsText(result.parts)}`);
  return result;
}

describe('A2AServer: a reachable card URL', () => {
  let emulator: Emulator;
  const closers: (() => Promise<void>)[] = [];
  beforeEach(async () => (emulator = await Emulator.start()));
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
    delete process.env.SKEIN_A2A_PUBLIC_URL;
    await emulator.stop();
  });

  it('refuses to listen on 0.0.0.0 without a public URL, saying how to give one', async () => {
    const server = new A2AServer({ agent: chatAgent(emulator), ...quietLogger() });
    const error = await rejection(server.listen(0, '0.0.0.0'));
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.contain('0.0.0.0').and.contain('url').and.contain('SKEIN_A2A_PUBLIC_URL');
  });

  it('refuses a bind address as the public URL', () => {
    expect(() => new A2AServer({ agent: chatAgent(emulator), url: 'http://0.0.0.0:8080' })).to.throw(ConfigurationError, /bind address/);
  });

  it('on 0.0.0.0 with a public URL (option or SKEIN_A2A_PUBLIC_URL) the card advertises that URL, and the SDK client uses it', async () => {
    // The public URL here is the loopback address the test reaches; in production, the proxy's.
    const probe = new A2AServer({ agent: chatAgent(emulator), ...quietLogger() });
    const port = Number(new URL(await probe.listen()).port);
    await probe.close();
    process.env.SKEIN_A2A_PUBLIC_URL = `http://127.0.0.1:${port}/`;
    const server = new A2AServer({ agent: chatAgent(emulator), ...quietLogger() });
    expect(await server.listen(port, '0.0.0.0')).to.equal(`http://127.0.0.1:${port}`);
    closers.push(() => server.close());
    const card = await (await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expect(JSON.stringify(card)).not.to.contain('0.0.0.0');
    expect(card.supportedInterfaces[0].url).to.equal(`http://127.0.0.1:${port}/a2a/jsonrpc`);
    const client = await sdkClient(`http://127.0.0.1:${port}`);
    const task = await send(client, userMessage('My name is Ada'));
    expect(task.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
  });

  it('mounted under a path with url, the SDK client reaches it through the card; without url the card says what is missing', async () => {
    const app = express();
    const outer = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    closers.push(() => new Promise<void>((resolve) => outer.close(() => resolve())));
    const base = `http://127.0.0.1:${(outer.address() as AddressInfo).port}`;
    const mounted = new A2AServer({ agent: chatAgent(emulator), url: `${base}/agents/ops`, ...quietLogger() });
    app.use('/agents/ops', mounted.app);
    const lost = new A2AServer({ agent: chatAgent(emulator), ...quietLogger() });
    app.use('/agents/lost', lost.app);

    // A base URL with a path ends in '/' for the SDK's card resolver (URL resolution drops the last segment otherwise).
    const client = await sdkClient(`${base}/agents/ops/`);
    const task = await send(client, userMessage('hello'));
    expect(task.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);

    // Skein's A2AAgent takes the base URL with or without the trailing slash.
    const remote = new A2AAgent({ url: `${base}/agents/ops` });
    expect((await remote.run('hello')).text).to.be.a('string').and.not.equal('');

    const answer = await fetch(`${base}/agents/lost/.well-known/agent-card.json`);
    expect(answer.status).to.equal(503);
    expect((await answer.json()).error).to.contain('mounted without a `url`');
  });
});

/** A raw request with the headers a browser page or a DNS-rebound name would send. */
function rawRequest(address: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  const url = new URL(path, address);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe("A2AServer: Skein's shared request checks when it listens", () => {
  let emulator: Emulator;
  let server: A2AServer;
  beforeEach(async () => {
    emulator = await Emulator.start();
    server = new A2AServer({ agent: chatAgent(emulator), url: 'https://agents.example.com/ops', allowedHosts: ['devbox.local:8443'], ...quietLogger() });
    await server.listen();
  });
  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  it('answers the public host and allowed hosts; refuses another Host (DNS rebinding), a foreign Origin, a preflight and a text/plain body', async () => {
    const at = server.listenAddress!;
    const card = '/.well-known/agent-card.json';
    expect((await rawRequest(at, card, { headers: { host: 'agents.example.com' } })).status).to.equal(200);
    expect((await rawRequest(at, card, { headers: { host: 'devbox.local:8443' } })).status).to.equal(200);
    const rebound = await rawRequest(at, card, { headers: { host: 'evil.example' } });
    expect(rebound.status).to.equal(403);
    expect(rebound.body).to.contain('allowedHosts').and.contain('SKEIN_ALLOWED_HOSTS');
    expect((await rawRequest(at, card, { headers: { origin: 'https://evil.example' } })).status).to.equal(403);
    expect((await rawRequest(at, '/a2a/jsonrpc', { method: 'OPTIONS', headers: { origin: 'https://evil.example' } })).status).to.equal(403);
    const form = await rawRequest(at, '/a2a/jsonrpc', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}' });
    expect(JSON.parse(form.body).error.code).to.equal(-32005);
    expect(emulator.requests).to.deep.equal([]);
  });
});

describe("A2AServer: a wrong content type is refused in the binding's own error format (A2A TCK JSONRPC-SSE-002, HTTP_JSON-STATUS-001)", () => {
  let emulator: Emulator;
  let server: A2AServer;
  beforeEach(async () => {
    emulator = await Emulator.start();
    server = new A2AServer({ agent: chatAgent(emulator), ...quietLogger() });
    await server.listen();
  });
  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  const sendMessage = { message: { role: 'ROLE_USER', parts: [{ text: 'content type test' }], messageId: 'ct-1' } };
  const errorInfo = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'CONTENT_TYPE_NOT_SUPPORTED', domain: 'a2a-protocol.org' };

  it('JSON-RPC: a JSON-RPC error envelope, code -32005 with its ErrorInfo, naming the content type; the SDK reads it as ContentTypeNotSupportedError; nothing runs', async () => {
    for (const [type, body] of [
      ['text/plain', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: sendMessage })],
      ['application/x-www-form-urlencoded', 'a=1'],
    ]) {
      const response = await fetch(`${server.url}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': type!, 'A2A-Version': '1.0' }, body });
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
      expect(response.status).to.equal(200);
      const envelope = (await response.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string; data: unknown[] } };
      expect(envelope).to.deep.include({ jsonrpc: '2.0', id: null });
      expect(envelope.error.code).to.equal(-32005);
      expect(envelope.error.message).to.contain(`got ${type}`).and.contain('application/json');
      expect(envelope.error.data).to.deep.equal([errorInfo]);
      expect(fromJsonRpcErrorResponse(envelope as Parameters<typeof fromJsonRpcErrorResponse>[0])).to.be.instanceOf(ContentTypeNotSupportedError);
    }
    expect(emulator.requests).to.deep.equal([]);
  });

  it("HTTP+JSON: an AIP-193 body {error: {code, status, message, details}}, HTTP 400 (A2A 1.0.1's table, the SDK's), naming the content type; the SDK reads it as ContentTypeNotSupportedError; nothing runs", async () => {
    for (const path of ['/a2a/rest/message:send', '/a2a/rest/message:stream', '/a2a/rest/tasks/t-1:cancel']) {
      const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'text/plain', 'A2A-Version': '1.0' }, body: JSON.stringify(sendMessage) });
      expect(response.status, path).to.equal(400);
      const body = (await response.json()) as { error: { code: number; status: string; message: string; details: Record<string, unknown>[] } };
      expect(Object.keys(body)).to.deep.equal(['error']);
      expect(body.error).to.deep.include({ code: 400, status: 'INVALID_ARGUMENT', details: [errorInfo] });
      expect(body.error.message).to.contain('got text/plain');
      expect(fromRestErrorBody(body.error, { statusCode: response.status })).to.be.instanceOf(ContentTypeNotSupportedError);
    }
    expect(emulator.requests).to.deep.equal([]);
  });

  it("the SDK's own clients (JSON-RPC and HTTP+JSON) whose requests carry text/plain get ContentTypeNotSupportedError", async () => {
    // A client (or a proxy in front of it) that labels the JSON body text/plain.
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      if (init?.method === 'POST') headers.set('content-type', 'text/plain');
      return fetch(input, { ...init, headers });
    };
    for (const binding of ['JSONRPC', 'HTTP+JSON']) {
      const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
        preferredTransports: [binding],
      });
      const client = await new ClientFactory(options).createFromUrl(server.url!);
      const refused = await rejection(client.sendMessage({ tenant: '', message: userMessage('hello'), configuration: undefined, metadata: undefined }));
      expect(refused, binding).to.be.instanceOf(ContentTypeNotSupportedError);
      expect(refused.message, binding).to.contain('got text/plain');
    }
    expect(emulator.requests).to.deep.equal([]);
  });

  it('the same requests with a JSON content type go through (the check is on the type, not the path)', async () => {
    const response = await fetch(`${server.url}/a2a/rest/message:send`, { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, body: JSON.stringify(sendMessage) });
    expect(response.status).to.equal(200);
    expect(emulator.requests.length).to.be.greaterThan(0);
  });
});

/** The agent kinds served: a ChatAgent's tool loop and the Assistants run processor (issue 28 §2: both ask first). */
const approvalAgents: [string, (emulator: Emulator, tool: AITool) => Promise<AIAgent>][] = [
  ['a Chat Completions agent', async (emulator, tool) => chatAgent(emulator, [tool])],
  [
    'an openai-assistants agent',
    (emulator, tool) =>
      OpenAIAssistantAgent.create(new OpenAI({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 }), { model: 'gpt-test', name: 'ops', description: 'Runs operations.' }, { tools: [tool], polling: { intervalMs: 1 } }),
  ],
];

for (const [kind, makeAgent] of approvalAgents) describe(`A2AServer: approvals are input-required (${kind})`, () => {
  let emulator: Emulator;
  let server: A2AServer;
  const deleted: string[] = [];

  beforeEach(async () => {
    deleted.length = 0;
    emulator = await Emulator.start();
    const deleteFile = deleteFileTool(deleted);
    server = new A2AServer({ agent: await makeAgent(emulator, deleteFile), ...quietLogger() });
    await server.listen();
  });
  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  it('the SDK client sees input-required with the pending call; "approve" runs the tool once and completes the task', async () => {
    const client = await sdkClient(server.url!);
    const asked = await send(client, userMessage('call delete_file {"path":"/tmp/a.txt"}'));
    expect(asked.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(deleted).to.deep.equal([]);
    const parts = asked.status?.message?.parts ?? [];
    expect(partsText(parts)).to.contain('delete_file').and.contain('approve');
    const data = parts.find((p) => p.content?.$case === 'data')?.content?.value as { type: string; calls: { name: string; arguments: string }[] };
    expect(data.type).to.equal('skein.approval-request');
    expect(data.calls.map((c) => [c.name, c.arguments])).to.deep.equal([['delete_file', '{"path":"/tmp/a.txt"}']]);

    const done = await send(client, userMessage('approve', { contextId: asked.contextId, taskId: asked.id }));
    expect(done.id).to.equal(asked.id);
    expect(done.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect(deleted).to.deep.equal(['/tmp/a.txt']);
    expect(done.artifacts.map((a) => partsText(a.parts)).join('')).to.contain('delete_file returned: deleted /tmp/a.txt');
  });

  it('a data part answers per call: rejected, the tool does not run and the task completes', async () => {
    const client = await sdkClient(server.url!);
    const asked = await send(client, userMessage('call delete_file {"path":"/etc/passwd"}'));
    const callId = (asked.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content?.value as { calls: { callId: string }[] }).calls[0]!.callId;
    const answer = { content: { $case: 'data' as const, value: { approvals: [{ callId, approved: false, reason: 'not that file' }] } }, metadata: undefined, filename: '', mediaType: 'application/json' };
    const done = await send(client, userMessage('', { contextId: asked.contextId, taskId: asked.id }, [answer]));
    expect(done.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect(deleted).to.deep.equal([]);
  });

  it("Skein's A2AAgent gets the pending calls as approvalRequests and answers with approvalResponse", async () => {
    const remote = new A2AAgent({ url: server.agentCardUrl! });
    const thread = remote.getNewThread();
    const asked = (await remote.run('call delete_file {"path":"/tmp/c.txt"}', { thread })) as A2ARunResponse;
    expect(asked.inputRequired).to.equal(true);
    expect(asked.approvalRequests.map((r) => [r.kind, r.name, r.arguments])).to.deep.equal([['function-approval-request', 'delete_file', '{"path":"/tmp/c.txt"}']]);
    const done = (await remote.run(approvalResponse(asked.approvalRequests[0]!, false, 'keep it'), { thread })) as A2ARunResponse;
    expect(done.taskState).to.equal('completed');
    expect(deleted).to.deep.equal([]);
  });

  it("Skein's own A2AAgent sees input-required and answers with a text reply", async () => {
    const remote = new A2AAgent({ url: server.agentCardUrl! });
    const thread = remote.getNewThread();
    const asked = (await remote.run('call delete_file {"path":"/tmp/b.txt"}', { thread })) as A2ARunResponse;
    expect(asked.inputRequired).to.equal(true);
    expect(asked.text).to.contain('delete_file');
    const done = (await remote.run('yes', { thread })) as A2ARunResponse;
    expect(done.taskState).to.equal('completed');
    expect(deleted).to.deep.equal(['/tmp/b.txt']);
  });
});

describe('A2AServer: authentication and context ownership (SDK client)', () => {
  let emulator: Emulator;
  let server: A2AServer;
  let logged: ReturnType<typeof quietLogger>['logged'];

  /** Bearer tokens are user names here; a real builder verifies a JWT or asks an identity service. */
  const userBuilder = async (req: IncomingMessage): Promise<User> => {
    const name = /^Bearer (alice|bob)$/.exec(req.headers.authorization ?? '')?.[1];
    return { isAuthenticated: name !== undefined, userName: name ?? '' };
  };

  beforeEach(async () => {
    emulator = await Emulator.start();
    const quiet = quietLogger();
    logged = quiet.logged;
    server = new A2AServer({
      agent: chatAgent(emulator),
      userBuilder,
      securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'user token', scheme: 'Bearer', bearerFormat: '' } } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      logger: quiet.logger,
    });
    await server.listen();
  });
  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  it('publishes registry fields and the security schemes on the card, read by the SDK client without credentials', async () => {
    const open = new A2AServer({
      agent: chatAgent(emulator),
      url: 'https://agents.example.com/ops',
      provider: { organization: 'Example Corp', url: 'https://example.com' },
      documentationUrl: 'https://example.com/docs/ops',
      iconUrl: 'https://example.com/ops.png',
      userBuilder,
      securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'user token', scheme: 'Bearer', bearerFormat: 'JWT' } } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      logger: quietLogger().logger,
    });
    expect(await open.listen()).to.equal('https://agents.example.com/ops');
    try {
      // The public host is the proxy's; read the card where the server listens.
      const card = await new DefaultAgentCardResolver().resolve(open.listenAddress!);
      expect(card.provider).to.deep.equal({ organization: 'Example Corp', url: 'https://example.com' });
      expect(card.documentationUrl).to.equal('https://example.com/docs/ops');
      expect(card.iconUrl).to.equal('https://example.com/ops.png');
      expect(card.securitySchemes.bearer?.scheme).to.deep.equal({ $case: 'httpAuthSecurityScheme', value: { description: 'user token', scheme: 'Bearer', bearerFormat: 'JWT' } });
      expect(card.supportedInterfaces[0]?.url).to.equal('https://agents.example.com/ops/a2a/jsonrpc');
    } finally {
      await open.close();
    }
  });

  it('answers 401 without credentials, on JSON-RPC and HTTP+JSON alike; says nothing about missing auth at start', async () => {
    for (const preferred of ['JSONRPC', 'HTTP+JSON'] as const) {
      const anonymous = await sdkClient(server.url!, undefined, preferred);
      const error = await rejection(send(anonymous, userMessage('hello')));
      expect(String(error)).to.contain('401');
    }
    expect(logged.warnings).to.deep.equal([]);
  });

  it("another user gets not-found for a context and its task, never its history; the owner continues", async () => {
    const alice = await sdkClient(server.url!, 'alice');
    const bob = await sdkClient(server.url!, 'bob');
    const first = await send(alice, userMessage('My name is Ada'));
    expect(first.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);

    const stolen = await rejection(send(bob, userMessage("What's my name?", { contextId: first.contextId })));
    expect((stolen as Error).name).to.equal('TaskNotFoundError');
    expect(String(stolen)).not.to.contain('Ada');
    const peek = await rejection(bob.getTask({ tenant: '', id: first.id, historyLength: 10 }));
    expect((peek as Error).name).to.equal('TaskNotFoundError');
    const listed = await bob.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', historyLength: 0, includeArtifacts: false, statusTimestampAfter: undefined });
    expect(listed.tasks.map((t) => t.id)).not.to.include(first.id);

    const again = await send(alice, userMessage("What's my name?", { contextId: first.contextId }));
    expect(again.artifacts.map((a) => partsText(a.parts)).join('')).to.contain('Ada');
    expect((await alice.getTask({ tenant: '', id: first.id, historyLength: 0 })).id).to.equal(first.id);
  });

  it('without a userBuilder the server says at start that it is open', async () => {
    const quiet = quietLogger();
    const open = new A2AServer({ agent: chatAgent(emulator), ...quiet });
    await open.listen();
    await open.close();
    expect(quiet.logged.warnings).to.have.length(1);
    expect(quiet.logged.warnings[0]).to.contain('no authentication').and.contain('userBuilder');
  });
});

describe('A2AServer: failures outside the agent run stay on the server', () => {
  const emu = useEmulator();

  /** A context store whose database is down: its error names the host and the password. */
  class DownContextStore extends InMemoryA2AContextStore {
    failing = false;
    override async load(contextId: string) {
      if (this.failing) throw new Error('connect ECONNREFUSED 10.9.8.7:5432 (postgres://ops:hunter2@10.9.8.7/agents)');
      return super.load(contextId);
    }
  }

  it('a store error reaches the caller as an internal error with an error id only (JSON-RPC and HTTP+JSON); the log has the rest; the context works again after', async () => {
    const quiet = quietLogger();
    const contextStore = new DownContextStore();
    const server = new A2AServer({ agent: chatAgent(emu.emulator), contextStore, logger: quiet.logger });
    await server.listen();
    try {
      const client = await sdkClient(server.url!);
      const first = await send(client, userMessage('My name is Ada'));
      contextStore.failing = true;
      for (const preferred of ['JSONRPC', 'HTTP+JSON'] as const) {
        const caller = await sdkClient(server.url!, undefined, preferred);
        const error = await rejection(send(caller, userMessage("What's my name?", { contextId: first.contextId })));
        const text = `${String(error)} ${JSON.stringify(error)}`;
        expect(text).not.to.contain('10.9.8.7');
        expect(text).not.to.contain('hunter2');
        const errorId = /error id ([0-9a-f-]{36})/.exec(text)?.[1];
        expect(errorId, text).to.be.a('string');
        const entry = quiet.logged.errors.find((e) => e.message.includes(errorId!));
        expect(entry, JSON.stringify(quiet.logged.errors.map((e) => e.message))).to.not.equal(undefined);
        expect(String(entry!.error)).to.contain('ECONNREFUSED 10.9.8.7');
      }
      const peek = await rejection(client.getTask({ tenant: '', id: first.id, historyLength: 10 }));
      expect(String(peek)).to.contain('error id').and.not.contain('hunter2');
      contextStore.failing = false;
      const again = await send(client, userMessage("What's my name?", { contextId: first.contextId }));
      expect(partsText(again.artifacts.flatMap((a) => a.parts))).to.contain('Ada');
    } finally {
      await server.close();
    }
  });
});
