import 'reflect-metadata';
import { AgentCard, type Message, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { LegacyGrpcTransport } from '@a2a-js/sdk/compat/v0_3/client/grpc';
import { type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore, type User } from '@a2a-js/sdk/server';
import { agentCardHandler } from '@a2a-js/sdk/server/express';
import { A2AService, UserBuilder, grpcService } from '@a2a-js/sdk/server/grpc';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import express from 'express';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { lastValueFrom } from 'rxjs';
import { AbortError, AuthenticationError, ChatAgent, ConfigurationError, ConnectionError, NotFoundError, RateLimitError, ServiceError } from 'skein';
import { A2AAgent, A2AAuthRequiredError, A2ARunResponse, A2AServer, A2ATaskRejectedError, partsText } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { telemetryMiddleware } from 'skein/telemetry';
import { rejection } from '../support/async-expectations.js';
import { deleteFileTool } from '../support/example-tools.js';
import { useTraceContext } from '../support/trace-context.js';
import { ScriptedExecutor, expectScriptedConversation, scriptedCard, userMessage } from './remote-fixtures.js';
import { offersHttp, prefersGrpc } from '../../plugins/a2a/a2a-grpc-client.js';

function quietLogger() {
  const logged = { warnings: [] as string[], errors: [] as { message: string; error: unknown }[] };
  return { logged, logger: { warn: (m: string) => logged.warnings.push(m), error: (message: string, error: unknown) => logged.errors.push({ message, error }) } };
}

function chatAgent(emulator: Emulator, deleted: string[] = []): ChatAgent {
  return new ChatAgent({
    chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
    name: 'ops',
    description: 'Runs operations.',
    tools: [deleteFileTool(deleted)],
  });
}

/** Bearer tokens are user names here. One builder for HTTP requests and gRPC calls: both have `headers`. */
const userBuilder = async (req: { headers: { authorization?: string | string[] } }): Promise<User> => {
  const name = /^Bearer (alice|bob)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  return { isAuthenticated: name !== undefined, userName: name ?? '' };
};

/** The SDK's own client over gRPC only, created from the server's card. */
async function sdkGrpcClient(server: A2AServer): Promise<Client> {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new GrpcTransportFactory()], preferredTransports: ['GRPC'] });
  return new ClientFactory(options).createFromUrl(server.url!);
}

/** The user's token as gRPC metadata on one call. */
function as(token?: string): { serviceParameters: Record<string, string> } {
  return { serviceParameters: token ? { authorization: `Bearer ${token}` } : {} };
}

async function send(client: Client, message: Message, token?: string): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined }, as(token));
  if ('messageId' in result) throw new Error(`expected a task, got a message: ${partsText(result.parts)}`);
  return result;
}

describe('A2AServer over gRPC: the SDK gRPC client against it', () => {
  let emulator: Emulator;
  let server: A2AServer;
  let logged: ReturnType<typeof quietLogger>['logged'];
  const deleted: string[] = [];

  beforeEach(async () => {
    deleted.length = 0;
    emulator = await Emulator.start();
    const quiet = quietLogger();
    logged = quiet.logged;
    server = new A2AServer({
      agent: chatAgent(emulator, deleted),
      userBuilder,
      grpcUserBuilder: userBuilder,
      securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'user token', scheme: 'Bearer', bearerFormat: '' } } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      logger: quiet.logger,
    });
    await server.listen();
    await server.listenGrpc();
  });
  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  it('keeps a conversation: send, continue the context, get the task', async () => {
    const client = await sdkGrpcClient(server);
    const first = await send(client, userMessage('My name is Ada'), 'alice');
    expect(first.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    const again = await send(client, userMessage("What's my name?", { contextId: first.contextId }), 'alice');
    expect(again.contextId).to.equal(first.contextId);
    expect(again.artifacts.map((a) => partsText(a.parts)).join('')).to.contain('Ada');
    const fetched = await client.getTask({ tenant: '', id: first.id, historyLength: 10 }, as('alice'));
    expect(fetched.id).to.equal(first.id);
    expect(fetched.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect(partsText(fetched.history.flatMap((m) => m.parts))).to.contain('My name is Ada');
  });

  it('streams the reply: artifact updates, then completed', async () => {
    const client = await sdkGrpcClient(server);
    const first = await send(client, userMessage('My name is Grace'), 'alice');
    const events = [];
    const request = { tenant: '', message: userMessage("What's my name?", { contextId: first.contextId }), configuration: undefined, metadata: undefined };
    for await (const event of client.sendMessageStream(request, as('alice'))) events.push(event);
    const final = events.map((e) => e.payload).filter((p) => p?.$case === 'statusUpdate').pop();
    expect(final?.$case === 'statusUpdate' && final.value.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    const text = events.map((e) => (e.payload?.$case === 'artifactUpdate' ? partsText(e.payload.value.artifact?.parts) : '')).join('');
    expect(text).to.contain('Grace');
  });

  it('approvals are input-required over gRPC; the task can be approved, or canceled', async () => {
    const client = await sdkGrpcClient(server);
    const asked = await send(client, userMessage('call delete_file {"path":"/tmp/a.txt"}'), 'alice');
    expect(asked.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(partsText(asked.status?.message?.parts)).to.contain('delete_file');
    const done = await send(client, userMessage('approve', { contextId: asked.contextId, taskId: asked.id }), 'alice');
    expect(done.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect(deleted).to.deep.equal(['/tmp/a.txt']);

    const open = await send(client, userMessage('call delete_file {"path":"/tmp/b.txt"}'), 'alice');
    expect(open.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    const canceled = await client.cancelTask({ tenant: '', id: open.id, metadata: undefined }, as('alice'));
    expect(canceled.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: '', id: open.id, historyLength: 0 }, as('alice'))).status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
    expect(deleted).to.deep.equal(['/tmp/a.txt']);
  });

  it("another user gets NOT_FOUND for a context and its task, never its history", async () => {
    const client = await sdkGrpcClient(server);
    const first = await send(client, userMessage('My name is Ada'), 'alice');
    const stolen = await rejection(send(client, userMessage("What's my name?", { contextId: first.contextId }), 'bob'));
    expect((stolen as Error).name).to.equal('TaskNotFoundError');
    expect((stolen as { status?: number }).status).to.equal(grpc.status.NOT_FOUND);
    expect(String(stolen)).not.to.contain('Ada');
    const peek = await rejection(client.getTask({ tenant: '', id: first.id, historyLength: 10 }, as('bob')));
    expect((peek as { status?: number }).status).to.equal(grpc.status.NOT_FOUND);
    const cancel = await rejection(client.cancelTask({ tenant: '', id: first.id, metadata: undefined }, as('bob')));
    expect((cancel as { status?: number }).status).to.equal(grpc.status.NOT_FOUND);
    const listed = await client.listTasks(
      { tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', historyLength: 0, includeArtifacts: false, statusTimestampAfter: undefined },
      as('bob'),
    );
    expect(listed.tasks.map((t) => t.id)).not.to.include(first.id);
    // The owner still continues.
    const again = await send(client, userMessage("What's my name?", { contextId: first.contextId }), 'alice');
    expect(again.artifacts.map((a) => partsText(a.parts)).join('')).to.contain('Ada');
  });

  it('refuses a call without an authenticated user with UNAUTHENTICATED, unary and streaming, before anything runs', async () => {
    const client = await sdkGrpcClient(server);
    const before = emulator.requests.length;
    for (const token of [undefined, 'mallory']) {
      const unary = await rejection(send(client, userMessage('hello'), token));
      expect((unary as { status?: number }).status, String(unary)).to.equal(grpc.status.UNAUTHENTICATED);
      expect(String(unary)).to.contain('authorization: Bearer');
      const streamed = await rejection(
        (async () => {
          for await (const _ of client.sendMessageStream({ tenant: '', message: userMessage('hello'), configuration: undefined, metadata: undefined }, as(token)));
        })(),
      );
      expect((streamed as { status?: number }).status, String(streamed)).to.equal(grpc.status.UNAUTHENTICATED);
    }
    expect(emulator.requests.length).to.equal(before);
    expect(logged.warnings).to.deep.equal([]);
  });

  it("a v0.3 gRPC client (the SDK's legacy transport) is served too", async () => {
    const card = await new DefaultAgentCardResolver().resolve(server.url!);
    const legacy = card.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC' && i.protocolVersion === '0.3');
    expect(legacy?.url).to.equal(server.grpcUrl);
    const transport = new LegacyGrpcTransport({ endpoint: legacy!.url });
    const options = { serviceParameters: { authorization: 'Bearer alice' } };
    const first = await transport.sendMessage({ tenant: '', message: userMessage('My name is Grace'), configuration: undefined, metadata: undefined }, options);
    const contextId = first.contextId;
    const second = await transport.sendMessage({ tenant: '', message: userMessage("What's my name?", { contextId }), configuration: undefined, metadata: undefined }, options);
    const text = 'messageId' in second ? partsText(second.parts) : second.artifacts.map((a) => partsText(a.parts)).join('');
    expect(text).to.contain('Grace');
  });
});

describe('A2AServer over gRPC: the card and the gRPC address', () => {
  let emulator: Emulator;
  const closers: (() => Promise<void>)[] = [];
  beforeEach(async () => (emulator = await Emulator.start()));
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
    delete process.env.SKEIN_A2A_GRPC_PUBLIC_URL;
    await emulator.stop();
  });

  function open(options: Partial<ConstructorParameters<typeof A2AServer>[0]> = {}): A2AServer {
    const server = new A2AServer({ agent: chatAgent(emulator), ...quietLogger(), ...options });
    closers.push(() => server.close());
    return server;
  }

  it('declares GRPC in supportedInterfaces only while gRPC is served (1.0, and 0.3 with legacyCompat)', async () => {
    const server = open();
    await server.listen();
    const bindings = async () => (await new DefaultAgentCardResolver().resolve(server.url!)).supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`);
    expect((await bindings()).filter((b) => b.startsWith('GRPC'))).to.deep.equal([]);
    const address = await server.listenGrpc();
    expect(address).to.match(/^127\.0\.0\.1:\d+$/);
    expect(server.grpcUrl).to.equal(address);
    expect(await bindings()).to.deep.equal([
      `JSONRPC 1.0 ${server.url}/a2a/jsonrpc`,
      `HTTP+JSON 1.0 ${server.url}/a2a/rest`,
      `GRPC 1.0 ${address}`,
      `JSONRPC 0.3 ${server.url}/a2a/jsonrpc`,
      `HTTP+JSON 0.3 ${server.url}/a2a/rest`,
      `GRPC 0.3 ${address}`,
    ]);
    await server.close();
    expect(server.grpcUrl).to.equal(undefined);
    expect(server.card.supportedInterfaces.map((i) => i.protocolBinding)).not.to.include('GRPC');

    const modern = open({ legacyCompat: false });
    await modern.listen();
    const grpcAddress = await modern.listenGrpc();
    expect(modern.card.supportedInterfaces.filter((i) => i.protocolBinding === 'GRPC').map((i) => `${i.protocolVersion} ${i.url}`)).to.deep.equal([`1.0 ${grpcAddress}`]);
  });

  it('close() stops the gRPC server: its port refuses connections and the card no longer declares it', async () => {
    const server = open();
    await server.listen();
    const address = await server.listenGrpc();
    const client = await sdkGrpcClient(server);
    expect((await send(client, userMessage('hello'))).status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    await server.close();
    const port = Number(address.split(':').pop());
    const refused = await new Promise<unknown>((resolve) => connect(port, '127.0.0.1').once('connect', () => resolve(undefined)).once('error', resolve));
    expect((refused as { code?: string } | undefined)?.code).to.equal('ECONNREFUSED');
    expect(server.card.supportedInterfaces.map((i) => i.protocolBinding)).not.to.include('GRPC');
  });

  it('never declares a bind address: 0.0.0.0 needs grpcUrl (or SKEIN_A2A_GRPC_PUBLIC_URL), which the card then names', async () => {
    const server = open({ url: 'https://agents.example.com/ops' });
    const refused = await rejection(server.listenGrpc(0, '0.0.0.0'));
    expect(refused).to.be.instanceOf(ConfigurationError);
    expect((refused as Error).message).to.contain('0.0.0.0').and.contain('grpcUrl').and.contain('SKEIN_A2A_GRPC_PUBLIC_URL');
    expect(server.grpcUrl).to.equal(undefined);

    const viaOption = open({ url: 'https://agents.example.com/ops', grpcUrl: 'grpc.example.com:443' });
    expect(await viaOption.listenGrpc(0, '0.0.0.0')).to.equal('grpc.example.com:443');
    expect(viaOption.card.supportedInterfaces.filter((i) => i.protocolBinding === 'GRPC').map((i) => i.url)).to.deep.equal(['grpc.example.com:443', 'grpc.example.com:443']);

    process.env.SKEIN_A2A_GRPC_PUBLIC_URL = 'grpc.internal:8443';
    const viaEnv = open({ url: 'https://agents.example.com/ops' });
    expect(await viaEnv.listenGrpc(0, '0.0.0.0')).to.equal('grpc.internal:8443');
  });

  it('refuses a grpcUrl that is not host:port, or is a bind address, naming the expected form', () => {
    for (const bad of ['https://grpc.example.com', 'grpc.example.com', '0.0.0.0:443', '[::]:443', 'host:port', 'grpc.example.com:0', 'grpc.example.com:70000']) {
      const error = (() => {
        try {
          new A2AServer({ agent: chatAgent(emulator), grpcUrl: bad });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, bad).to.be.instanceOf(ConfigurationError);
      expect((error as Error).message, bad).to.contain('grpcUrl');
    }
    expect(() => new A2AServer({ agent: chatAgent(emulator), grpcUrl: '[2001:db8::1]:443' })).not.to.throw();
  });

  it('a port in use is an error naming the address; the server can then serve gRPC elsewhere', async () => {
    const first = open();
    const taken = await first.listenGrpc();
    const second = open();
    const error = await rejection(second.listenGrpc(Number(taken.split(':').pop())));
    expect((error as Error).message).to.contain(`could not serve gRPC on ${taken}`).and.contain('EADDRINUSE');
    expect(second.grpcUrl).to.equal(undefined);
    expect(await second.listenGrpc()).to.match(/^127\.0\.0\.1:\d+$/);
  });

  it('a grpcUserBuilder that throws refuses the call with UNAUTHENTICATED; the reason goes to the log only', async () => {
    const quiet = quietLogger();
    const server = open({
      ...quiet,
      grpcUserBuilder: async () => {
        throw new Error('identity service down at 10.0.0.7');
      },
    });
    await server.listen();
    await server.listenGrpc();
    const before = emulator.requests.length;
    const error = await rejection(send(await sdkGrpcClient(server), userMessage('hello'), 'alice'));
    expect((error as { status?: number }).status, String(error)).to.equal(grpc.status.UNAUTHENTICATED);
    expect(String(error)).not.to.contain('10.0.0.7');
    expect(quiet.logged.warnings.some((w) => w.includes('grpcUserBuilder refused a call') && w.includes('identity service down'))).to.equal(true);
    expect(emulator.requests.length).to.equal(before);
  });

  it('with userBuilder, listenGrpc needs grpcUserBuilder (gRPC is never the open door)', async () => {
    const server = open({ userBuilder });
    const error = await rejection(server.listenGrpc());
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.contain('grpcUserBuilder');
    expect(server.grpcUrl).to.equal(undefined);
  });

  it('without authentication, gRPC says at start that the server is open, once', async () => {
    const quiet = quietLogger();
    const server = open(quiet);
    await server.listenGrpc();
    await server.listen();
    expect(quiet.logged.warnings).to.have.length(1);
    expect(quiet.logged.warnings[0]).to.contain('no authentication');
  });
});

interface SdkGrpcServerOptions {
  /** Card fields to set (security schemes and requirements). */
  card?: Partial<Pick<AgentCard, 'securitySchemes' | 'securityRequirements'>>;
  /** Every call's method and metadata, as the server saw them. */
  seen?: { method: string; metadata: Record<string, string> }[];
  /** Instead of the SDK's service: every method fails with this gRPC status (a gateway in front). */
  failWith?: { code: grpc.status; details: string };
  /** Serve TLS with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
}

/** The SDK's own gRPC server (DefaultRequestHandler + grpcService) on 127.0.0.1, its card (GRPC only) over HTTP. */
async function startSdkGrpcServer(executor: AgentExecutor, options: SdkGrpcServerOptions = {}) {
  const card = scriptedCard('scripted-grpc', 'A scripted remote agent over gRPC', options.card);
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const grpcServer = new grpc.Server();
  const recorded: Parameters<typeof grpcService>[0]['userBuilder'] = async (call) => {
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(call.metadata.getMap())) metadata[k] = String(v);
    options.seen?.push({ method: call.getPath(), metadata });
    return UserBuilder.noAuthentication();
  };
  if (options.failWith) {
    const failure = Object.assign(new Error(options.failWith.details), options.failWith);
    const failing: grpc.UntypedServiceImplementation = {};
    for (const name of Object.keys(A2AService)) {
      failing[name] = (call: grpc.ServerWritableStream<unknown, unknown>, callback?: (error: unknown) => void) => (callback ? callback(failure) : call.emit('error', failure));
    }
    grpcServer.addService(A2AService, failing);
  } else {
    grpcServer.addService(A2AService, grpcService({ requestHandler: handler, userBuilder: recorded }));
  }
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync(
      '127.0.0.1:0',
      options.tls ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(options.tls.key), cert_chain: Buffer.from(options.tls.cert) }]) : grpc.ServerCredentials.createInsecure(),
      (error, p) => (error ? reject(error) : resolve(p)),
    ),
  );
  // TLS by name: Node refuses an IP address as the TLS server name.
  const grpcAddress = `${options.tls ? 'localhost' : '127.0.0.1'}:${port}`;
  card.supportedInterfaces.push({ url: grpcAddress, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' });
  const app = express();
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => AgentCard.toJSON(card) as AgentCard }));
  const http = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    cardUrl: `${base}/.well-known/agent-card.json`,
    grpcAddress,
    close: async () => {
      grpcServer.forceShutdown();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('A2AAgent: which binding a card asks for', () => {
  const card = (...bindings: string[]) => ({ supportedInterfaces: bindings.map((protocolBinding) => ({ url: 'x', protocolBinding, tenant: '', protocolVersion: '1.0' })) }) as unknown as AgentCard;

  it('uses gRPC only when it is the first binding Skein speaks, in card order', () => {
    expect(prefersGrpc(card('GRPC'))).to.equal(true);
    expect(prefersGrpc(card('grpc', 'JSONRPC'))).to.equal(true);
    expect(prefersGrpc(card('CUSTOM', 'GRPC', 'HTTP+JSON'))).to.equal(true);
    expect(prefersGrpc(card('JSONRPC', 'GRPC'))).to.equal(false);
    expect(prefersGrpc(card('HTTP+JSON', 'GRPC'))).to.equal(false);
    expect(prefersGrpc(card())).to.equal(false);
    expect(offersHttp(card('GRPC'))).to.equal(false);
    expect(offersHttp(card('GRPC', 'http+json'))).to.equal(true);
  });
});

describe("A2AAgent over gRPC: against the SDK's own gRPC server", () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
  });

  async function remote(executor: AgentExecutor = new ScriptedExecutor(), options: SdkGrpcServerOptions = {}) {
    const started = await startSdkGrpcServer(executor, options);
    closers.push(started.close);
    return started;
  }

  it('picks gRPC from a gRPC-only card: input-required continues, streams, direct messages, polling', async () => {
    const seen: SdkGrpcServerOptions['seen'] = [];
    const server = await remote(new ScriptedExecutor(), { seen });
    await expectScriptedConversation(new A2AAgent({ url: server.cardUrl }));
    const polled = (await new A2AAgent({ url: server.cardUrl, mode: 'poll', pollIntervalMs: 20 }).run('weather')) as A2ARunResponse;
    expect(polled.inputRequired).to.equal(true);
    const methods = seen!.map((s) => s.method);
    expect(methods).to.include('/lf.a2a.v1.A2AService/SendStreamingMessage');
    expect(methods).to.include('/lf.a2a.v1.A2AService/SendMessage');
    expect(seen!.every((s) => s.metadata['a2a-version'] === '1.0')).to.equal(true);
  });

  it('a multi-turn thread survives serialization and continues over gRPC', async () => {
    const executor = new ScriptedExecutor();
    const server = await remote(executor);
    const agent = new A2AAgent({ url: server.cardUrl });
    const thread = agent.getNewThread();
    await agent.run('weather', { thread });
    const restored = await agent.deserializeThread(await thread.serialize());
    const done = (await new A2AAgent({ url: server.cardUrl }).run('Oslo', { thread: restored })) as A2ARunResponse;
    expect(done.taskState).to.equal('completed');
    expect(done.text).to.equal('Weather in Oslo: sunny');
    expect(executor.continuations.map((c) => c.text)).to.deep.equal(['Oslo']);
    expect(done.contextId).to.equal(thread.serviceThreadId);
  });

  it('remote task states become the typed errors; unsubscribing cancels the remote task', async () => {
    const executor = new ScriptedExecutor();
    const server = await remote(executor);
    const agent = new A2AAgent({ url: server.cardUrl });
    expect(await rejection(agent.run('reject'))).to.be.instanceOf(A2ATaskRejectedError);
    expect(await rejection(agent.run('auth'))).to.be.instanceOf(A2AAuthRequiredError);

    const started = executor.started();
    const canceled = executor.whenCanceled();
    const subscription = agent.runStream('hold').subscribe({ error: () => {} });
    const taskId = await started;
    subscription.unsubscribe();
    expect(await canceled).to.equal(taskId);

    // run's abort does the same, and is an AbortError.
    const controller = new AbortController();
    const startedAgain = executor.started();
    const canceledAgain = executor.whenCanceled();
    const run = agent.run('hold on', { signal: controller.signal });
    const held = await startedAgain;
    controller.abort();
    expect(await rejection(run)).to.be.instanceOf(AbortError);
    expect(await canceledAgain).to.equal(held);
  });

  it('sends credentials (card schemes answered by credentials.token), headers and the credentials hook as gRPC metadata', async () => {
    const seen: SdkGrpcServerOptions['seen'] = [];
    const server = await remote(new ScriptedExecutor(), {
      seen,
      card: {
        securitySchemes: {
          bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: '', scheme: 'Bearer', bearerFormat: '' } } },
          key: { scheme: { $case: 'apiKeySecurityScheme', value: { description: '', location: 'header', name: 'X-Api-Key' } } },
        },
        securityRequirements: [{ schemes: { bearer: { list: [] }, key: { list: [] } } }],
      },
    });
    const agent = new A2AAgent({
      url: server.cardUrl,
      headers: { 'X-Tenant': 'acme' },
      credentials: {
        token: (request) => (request.kind === 'bearer' ? 'tok-1' : request.kind === 'apiKey' ? 'key-1' : undefined),
        headers: ({ url }) => ({ 'X-Called': url }),
      },
    });
    expect((await agent.run('hello')).text).to.equal('echo: hello');
    expect(seen).to.have.length(1);
    expect(seen![0]!.metadata).to.deep.include({ authorization: 'Bearer tok-1', 'x-api-key': 'key-1', 'x-tenant': 'acme', 'x-called': server.grpcAddress });
  });

  it('turns gRPC statuses into typed errors on run (unary) and runStream, like HTTP statuses', async () => {
    const cases: [grpc.status, new (...args: never[]) => ServiceError][] = [
      [grpc.status.UNAUTHENTICATED, AuthenticationError],
      [grpc.status.PERMISSION_DENIED, AuthenticationError],
      [grpc.status.RESOURCE_EXHAUSTED, RateLimitError],
      [grpc.status.NOT_FOUND, NotFoundError],
      [grpc.status.UNAVAILABLE, ConnectionError],
      [grpc.status.INTERNAL, ServiceError],
    ];
    for (const [code, type] of cases) {
      const server = await remote(new ScriptedExecutor(), { failWith: { code, details: `gateway says ${grpc.status[code]}` } });
      const polled = await rejection(new A2AAgent({ url: server.cardUrl, mode: 'poll' }).run('hello'));
      const agent = new A2AAgent({ url: server.cardUrl });
      const streamed = await rejection(lastValueFrom(agent.runStream('hello')));
      for (const error of [polled, streamed]) {
        expect(error, `${grpc.status[code]}: ${String(error)}`).to.be.instanceOf(type);
        expect((error as ServiceError).provider).to.equal('a2a');
        expect((error as Error).message).to.contain(`gRPC ${grpc.status[code]}`).and.contain(`gateway says ${grpc.status[code]}`);
      }
      if (code === grpc.status.INTERNAL) expect(polled).not.to.be.instanceOf(ConnectionError).and.not.to.be.instanceOf(AuthenticationError);
    }
  });

  it("an unknown task is NotFoundError; nothing listening at the card's gRPC address is ConnectionError", async () => {
    const server = await remote();
    const agent = new A2AAgent({ url: server.cardUrl });
    const thread = agent.getNewThread();
    thread.setServiceThreadId('ctx-1');
    thread.state = { a2a: { taskId: 'no-such-task', artifactIds: [] } };
    const unknown = await rejection(agent.run('Paris', { thread }));
    expect(unknown, String(unknown)).to.be.instanceOf(NotFoundError);
    expect((unknown as Error).message).to.contain('gRPC NOT_FOUND').and.contain('TaskNotFoundError');
    expect(thread.state).to.deep.equal({ a2a: { taskId: 'no-such-task', artifactIds: [] } });

    const gone = await remote();
    const stale = new A2AAgent({ url: gone.cardUrl });
    await stale.getAgentCard();
    const closed = closers.pop()!;
    await closed();
    const card = { ...(await stale.getAgentCard()) };
    expect(card.supportedInterfaces[0]?.protocolBinding).to.equal('GRPC');
    const down = await rejection(stale.run('hello'));
    expect(down, String(down)).to.be.instanceOf(ConnectionError);
    expect((down as Error).message).to.contain('gRPC UNAVAILABLE');
  });
});

describe('A2A over gRPC: W3C trace context as metadata', () => {
  const { exporter, tracerProvider } = useTraceContext();

  it("A2AAgent sends its run span's traceparent as gRPC metadata", async () => {
    const seen: SdkGrpcServerOptions['seen'] = [];
    const server = await startSdkGrpcServer(new ScriptedExecutor(), { seen });
    try {
      const agent = new A2AAgent({ url: server.cardUrl, name: 'scripted', middleware: telemetryMiddleware({ tracerProvider }) });
      await agent.run('hello');
      const [span] = exporter.getFinishedSpans();
      const { traceId, spanId } = span!.spanContext();
      expect(seen!.map((s) => s.metadata.traceparent)).to.deep.equal([`00-${traceId}-${spanId}-01`]);
    } finally {
      await server.close();
    }
  });

  it("A2AServer runs the hosted agent under a gRPC caller's traceparent", async () => {
    const emulator = await Emulator.start();
    const agent = new ChatAgent({
      chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
      name: 'assistant',
      middleware: telemetryMiddleware({ tracerProvider }),
    });
    const server = new A2AServer({ agent, ...quietLogger() });
    await server.listen();
    await server.listenGrpc();
    try {
      const traceId = randomUUID().replace(/-/g, '');
      const parentSpanId = '00f067aa0ba902b7';
      const client = await sdkGrpcClient(server);
      await client.sendMessage(
        { tenant: '', message: userMessage('hello'), configuration: undefined, metadata: undefined },
        { serviceParameters: { traceparent: `00-${traceId}-${parentSpanId}-01` } },
      );
      const run = exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent assistant');
      expect(run, exporter.getFinishedSpans().map((s) => s.name).join(', ')).not.to.equal(undefined);
      expect(run!.spanContext().traceId).to.equal(traceId);
      expect(run!.parentSpanContext?.spanId).to.equal(parentSpanId);
    } finally {
      await server.close();
      await emulator.stop();
    }
  });
});

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl for this run. */
async function selfSignedCertificate(): Promise<{ key: string; cert: string } | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'skein-grpc-tls-'));
  try {
    const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'];
    await promisify(execFile)('openssl', [...args, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]);
    return { key: await readFile(join(dir, 'key.pem'), 'utf8'), cert: await readFile(join(dir, 'cert.pem'), 'utf8') };
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('A2A over gRPC with TLS', () => {
  let tls: { key: string; cert: string };
  let emulator: Emulator;
  const closers: (() => Promise<void>)[] = [];

  before(async function () {
    const made = await selfSignedCertificate();
    if (!made) return this.skip(); // no openssl on this machine to make a certificate
    tls = made;
  });
  beforeEach(async () => (emulator = await Emulator.start()));
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
    await emulator.stop();
  });

  it('listenGrpc with tls serves the SDK gRPC client over TLS; a plaintext client is refused', async () => {
    const server = new A2AServer({ agent: chatAgent(emulator), ...quietLogger() });
    closers.push(() => server.close());
    await server.listen();
    // By name: Node refuses an IP address as the TLS server name.
    expect(await server.listenGrpc(0, 'localhost', { tls })).to.match(/^localhost:\d+$/);
    const secure = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory({ grpcChannelCredentials: grpc.credentials.createSsl(Buffer.from(tls.cert)) })],
      preferredTransports: ['GRPC'],
    });
    const client = await new ClientFactory(secure).createFromUrl(server.url!);
    const first = await send(client, userMessage('My name is Ada'));
    const again = await send(client, userMessage("What's my name?", { contextId: first.contextId }));
    expect(again.artifacts.map((a) => partsText(a.parts)).join('')).to.contain('Ada');

    const plaintext = await sdkGrpcClient(server);
    const refused = await rejection(send(plaintext, userMessage('hello')));
    expect((refused as { status?: number }).status, String(refused)).to.equal(grpc.status.UNAVAILABLE);
  });

  it('A2AAgent speaks TLS with grpc: { tls: { ca } }; without it, the plaintext call is a ConnectionError', async () => {
    const server = await startSdkGrpcServer(new ScriptedExecutor(), { tls });
    closers.push(server.close);
    const agent = new A2AAgent({ url: server.cardUrl, grpc: { tls: { ca: tls.cert } } });
    const thread = agent.getNewThread();
    expect(((await agent.run('weather', { thread })) as A2ARunResponse).inputRequired).to.equal(true);
    expect((await agent.run('Rome', { thread })).text).to.equal('Weather in Rome: sunny');
    const plaintext = await rejection(new A2AAgent({ url: server.cardUrl }).run('hello'));
    expect(plaintext, String(plaintext)).to.be.instanceOf(ConnectionError);
    const untrusted = await rejection(new A2AAgent({ url: server.cardUrl, grpc: { tls: true } }).run('hello'));
    expect(untrusted, String(untrusted)).to.be.instanceOf(ConnectionError);
  });
});
