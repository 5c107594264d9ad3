import 'reflect-metadata';
import { expect } from 'chai';
import express, { type RequestHandler } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { type AIAgent, AuthenticationError, ConnectionError, NotFoundError, RateLimitError, ServiceError, agentToken, createContainer } from 'skein';
import { A2AAgent, A2ARunResponse, a2aPlugin, clientCredentialsToken, type A2ACredentialRequest } from 'skein/a2a';
import { rejection } from '../support/async-expectations.js';
import { ScriptedExecutor, type SdkServerOptions, startSdkServer } from './remote-fixtures.js';

/** What a gateway in front of the remote answers instead of it, for one kind of request. */
interface Fault {
  on: 'card' | 'SendMessage' | 'SendStreamingMessage' | 'GetTask' | 'CancelTask';
  status: number;
  contentType: string;
  body: string;
}

/** The requests the gateway saw: `card` or the JSON-RPC method, with their headers. */
interface Seen {
  what: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
}

function gateway(state: { fault?: Fault; seen: Seen[]; allow?: (seen: Seen) => boolean }): RequestHandler {
  const json = express.json();
  return (req, res, next) => {
    json(req, res, () => {
      const what = req.path.startsWith('/.well-known') ? 'card' : String((req.body as { method?: unknown } | undefined)?.method ?? req.path);
      const seen = { what, headers: { ...req.headers }, query: { ...req.query } };
      state.seen.push(seen);
      const fault = state.fault;
      if (fault && fault.on === what) {
        res.status(fault.status).type(fault.contentType).send(fault.body);
        return;
      }
      if (what !== 'card' && state.allow && !state.allow(seen)) {
        res.status(401).type('application/json').send(JSON.stringify({ error: 'unauthorized' }));
        return;
      }
      next();
    });
  };
}

const FAULTS: { name: string; fault: Omit<Fault, 'on'>; type: new (...args: never[]) => ServiceError }[] = [
  { name: '401 with a JSON body', fault: { status: 401, contentType: 'application/json', body: '{"error":{"code":401,"message":"bad token"}}' }, type: AuthenticationError },
  { name: '403 in text/plain', fault: { status: 403, contentType: 'text/plain', body: 'Forbidden' }, type: AuthenticationError },
  { name: '429', fault: { status: 429, contentType: 'application/json', body: '{"error":"slow down"}' }, type: RateLimitError },
  { name: '503 in text/plain from a gateway', fault: { status: 503, contentType: 'text/plain', body: 'Service Unavailable' }, type: ServiceError },
  { name: '500 with a non-A2A JSON body', fault: { status: 500, contentType: 'application/json', body: '{"error":{"code":500,"message":"upstream"}}' }, type: ServiceError },
];

describe('A2AAgent: HTTP failures are typed on every path (against the SDK server behind a gateway)', () => {
  let remote: Awaited<ReturnType<typeof startSdkServer>>;
  const state: { fault?: Fault; seen: Seen[] } = { seen: [] };

  beforeEach(async () => {
    state.fault = undefined;
    state.seen = [];
    remote = await startSdkServer(new ScriptedExecutor(), { gate: gateway(state) });
  });
  afterEach(() => remote.close());

  const paths: { on: Fault['on']; call: () => Promise<unknown> }[] = [
    { on: 'card', call: () => new A2AAgent({ url: remote.cardUrl }).getAgentCard() },
    { on: 'SendMessage', call: () => new A2AAgent({ url: remote.cardUrl, mode: 'poll' }).run('hello') },
    { on: 'SendStreamingMessage', call: () => lastValueFrom(new A2AAgent({ url: remote.cardUrl }).runStream('hello')) },
    { on: 'GetTask', call: () => new A2AAgent({ url: remote.cardUrl, mode: 'poll', pollIntervalMs: 10 }).run('hold') },
    {
      on: 'CancelTask',
      call: async () => {
        const agent = new A2AAgent({ url: remote.cardUrl });
        const thread = agent.getNewThread();
        await agent.run('weather', { thread });
        await agent.deleteThread(thread);
      },
    },
  ];

  for (const path of paths) {
    for (const { name, fault, type } of FAULTS) {
      it(`${path.on}: ${name} is ${type.name} with status ${fault.status}`, async () => {
        state.fault = { on: path.on, ...fault };
        const error = await rejection(path.call());
        expect(error).to.be.instanceOf(type);
        expect(error).not.to.be.instanceOf(ConnectionError);
        expect((error as ServiceError).status).to.equal(fault.status);
        expect((error as ServiceError).provider).to.equal('a2a');
        expect((error as Error).message).to.contain(`HTTP ${fault.status}`);
        expect(state.seen.some((s) => s.what === path.on)).to.equal(true);
      });
    }
  }

  it('a failed send leaves the thread as it was; the next run works', async () => {
    const agent = new A2AAgent({ url: remote.cardUrl });
    const thread = agent.getNewThread();
    await agent.run('hello', { thread });
    const before = JSON.stringify(await thread.serialize());
    state.fault = { on: 'SendStreamingMessage', status: 503, contentType: 'text/plain', body: 'down' };
    await rejection(agent.run('again', { thread }));
    expect(JSON.stringify(await thread.serialize())).to.equal(before);
    state.fault = undefined;
    expect((await agent.run('again', { thread })).text).to.equal('echo: again');
  });

  it('an A2A protocol error still arrives as the A2A error (task not found), not as an HTTP one', async () => {
    const agent = new A2AAgent({ url: remote.cardUrl });
    const asked = agent.getNewThread();
    await agent.run('weather', { thread: asked });
    const saved = JSON.parse(JSON.stringify(await asked.serialize())) as { state: { a2a: { taskId: string } } };
    saved.state.a2a.taskId = 'no-such-task';
    const thread = await agent.deserializeThread(saved);
    const error = await rejection(agent.run('Paris', { thread }));
    expect(error).to.be.instanceOf(NotFoundError);
    expect((error as ServiceError).status).to.equal(undefined);
    expect((error as Error).message).to.match(/task/i);
  });

  it('sends every request, card and JSON-RPC alike, through the given fetch with the given headers', async () => {
    const calls: string[] = [];
    const userFetch: typeof fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method: string }).method : 'card';
      calls.push(body);
      return fetch(input, init);
    };
    const agent = new A2AAgent({ url: remote.cardUrl, fetch: userFetch, headers: { 'X-Tenant': 'acme' }, mode: 'poll', pollIntervalMs: 10 });
    const thread = agent.getNewThread();
    await agent.run('weather', { thread });
    await lastValueFrom(agent.runStream('Paris', { thread }));
    const t2 = agent.getNewThread();
    await agent.run('weather', { thread: t2 });
    await agent.deleteThread(t2);
    expect(calls).to.include.members(['card', 'SendMessage', 'SendStreamingMessage', 'CancelTask']);
    expect(calls).to.deep.equal(state.seen.map((s) => s.what));
    expect(state.seen.every((s) => s.headers['x-tenant'] === 'acme')).to.equal(true);
  });
});

/** A token server for OAuth 2 client credentials (HTTP basic client auth), counting the tokens it gives. */
async function startTokenServer() {
  const issued: { scope: string | undefined }[] = [];
  const app = express();
  app.post('/token', express.urlencoded({ extended: false }), (req, res) => {
    const expected = `Basic ${Buffer.from('app:s3cret').toString('base64')}`;
    if (req.headers.authorization !== expected || req.body?.grant_type !== 'client_credentials') {
      res.status(401).json({ error: 'invalid_client' });
      return;
    }
    issued.push({ scope: req.body.scope as string | undefined });
    res.json({ access_token: `oauth-${issued.length}`, token_type: 'Bearer', expires_in: 3600 });
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { tokenUrl: `${base}/token`, issued, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('A2AAgent credentials: answering the card security schemes (SDK server behind an auth gateway)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
  });

  async function secured(card: SdkServerOptions['card'], allow: (seen: Seen) => boolean) {
    const state: { seen: Seen[]; allow: (seen: Seen) => boolean } = { seen: [], allow };
    const remote = await startSdkServer(new ScriptedExecutor(), { gate: gateway(state), card });
    closers.push(remote.close);
    return { remote, state };
  }

  const bearerCard: SdkServerOptions['card'] = {
    securitySchemes: { corp: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: '', scheme: 'Bearer', bearerFormat: 'JWT' } } } },
    securityRequirements: [{ schemes: { corp: { list: [] } } }],
  };

  it('answers a bearer scheme with the token function, on every request', async () => {
    const { remote, state } = await secured(bearerCard, (s) => s.headers.authorization === 'Bearer t-1');
    const asked: A2ACredentialRequest[] = [];
    const agent = new A2AAgent({
      url: remote.cardUrl,
      credentials: {
        token: (request) => {
          asked.push(request);
          return 't-1';
        },
      },
    });
    const thread = agent.getNewThread();
    expect((await agent.run('weather', { thread })).text).to.contain('Which city?');
    expect((await agent.run('Paris', { thread })).text).to.equal('Weather in Paris: sunny');
    expect(asked[0]).to.deep.equal({ kind: 'bearer', schemeName: 'corp', bearerFormat: 'JWT', scopes: [] });
    expect(state.seen.filter((s) => s.what !== 'card').every((s) => s.headers.authorization === 'Bearer t-1')).to.equal(true);
  });

  it('a2aPlugin({ credentials }) gives them to every A2A agent of the container', async () => {
    const { remote } = await secured(bearerCard, (s) => s.headers.authorization === 'Bearer t-1');
    const container = createContainer({ plugins: [a2aPlugin({ credentials: { token: () => 't-1' } })], agents: { scripted: { client: 'a2a', url: remote.cardUrl } } });
    const agent = container.get<AIAgent>(agentToken('scripted'));
    expect((await agent.run('hello')).text).to.equal('echo: hello');
  });

  it('without credentials the 401 is an AuthenticationError naming the scheme the card requires', async () => {
    const { remote } = await secured(bearerCard, (s) => s.headers.authorization === 'Bearer t-1');
    const error = await rejection(new A2AAgent({ url: remote.cardUrl }).run('hello'));
    expect(error).to.be.instanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).to.equal(401);
    expect((error as Error).message).to.contain('corp (HTTP Bearer)');
  });

  it('a token function that answers no alternative gives an AuthenticationError before anything is sent', async () => {
    const { remote, state } = await secured(bearerCard, () => true);
    const error = await rejection(new A2AAgent({ url: remote.cardUrl, credentials: { token: () => undefined } }).run('hello'));
    expect(error).to.be.instanceOf(AuthenticationError);
    expect((error as Error).message).to.contain('corp (HTTP Bearer)');
    expect(state.seen.map((s) => s.what)).to.deep.equal(['card']);
  });

  it('answers an API key scheme in the header the card names, picking the alternative it can satisfy', async () => {
    const card: SdkServerOptions['card'] = {
      securitySchemes: {
        oidc: { scheme: { $case: 'openIdConnectSecurityScheme', value: { description: '', openIdConnectUrl: 'https://id.example/.well-known/openid-configuration' } } },
        key: { scheme: { $case: 'apiKeySecurityScheme', value: { description: '', location: 'header', name: 'X-API-Key' } } },
      },
      securityRequirements: [{ schemes: { oidc: { list: ['agents'] } } }, { schemes: { key: { list: [] } } }],
    };
    const { remote } = await secured(card, (s) => s.headers['x-api-key'] === 'k-42' && s.headers.authorization === undefined);
    const agent = new A2AAgent({ url: remote.cardUrl, credentials: { token: (r) => (r.kind === 'apiKey' ? 'k-42' : undefined) } });
    expect((await agent.run('hello')).text).to.equal('echo: hello');
  });

  it('answers OAuth 2 client credentials with clientCredentialsToken: one token for several requests, the card scopes asked', async () => {
    const tokens = await startTokenServer();
    closers.push(tokens.close);
    const card: SdkServerOptions['card'] = {
      securitySchemes: {
        oauth: {
          scheme: {
            $case: 'oauth2SecurityScheme',
            value: { description: '', oauth2MetadataUrl: '', flows: { flow: { $case: 'clientCredentials', value: { tokenUrl: tokens.tokenUrl, refreshUrl: '', scopes: { 'agent:call': 'call' } } } } },
          },
        },
      },
      securityRequirements: [{ schemes: { oauth: { list: ['agent:call'] } } }],
    };
    const { remote } = await secured(card, (s) => s.headers.authorization === 'Bearer oauth-1');
    const agent = new A2AAgent({ url: remote.cardUrl, credentials: { token: clientCredentialsToken({ clientId: 'app', clientSecret: 's3cret' }) } });
    const thread = agent.getNewThread();
    await agent.run('weather', { thread });
    const r = (await agent.run('Oslo', { thread })) as A2ARunResponse;
    expect(r.text).to.equal('Weather in Oslo: sunny');
    expect(tokens.issued).to.deep.equal([{ scope: 'agent:call' }]);

    const wrong = new A2AAgent({ url: remote.cardUrl, credentials: { token: clientCredentialsToken({ clientId: 'app', clientSecret: 'nope' }) } });
    const error = await rejection(wrong.run('hello'));
    expect(error).to.be.instanceOf(AuthenticationError);
    expect((error as Error).message).to.contain('refused the client credentials');
  });

  it('calls the headers hook for every request, the card included (rotating tokens)', async () => {
    let n = 0;
    const { remote, state } = await secured({}, (s) => typeof s.headers.authorization === 'string');
    const agent = new A2AAgent({ url: remote.cardUrl, mode: 'stream', credentials: { headers: () => ({ Authorization: `Bearer rotating-${++n}` }) } });
    const thread = agent.getNewThread();
    await agent.run('hello', { thread });
    await agent.run('again', { thread });
    expect(state.seen.map((s) => s.headers.authorization)).to.deep.equal(['Bearer rotating-1', 'Bearer rotating-2', 'Bearer rotating-3']);
  });
});
