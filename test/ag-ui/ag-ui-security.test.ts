import { expect } from 'chai';
import { request } from 'node:http';
import { type AIAgent, agentToken, createContainer } from 'skein';
import { AgUiServer } from 'skein/ag-ui';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { HttpAgent, postRaw, runVerified, say } from './ag-ui-fixture.js';

const input = (threadId: string, extra: Record<string, unknown> = {}) => ({ threadId, runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'hi' }], tools: [], context: [], state: {}, forwardedProps: {}, ...extra });

/** A raw request, for headers fetch would not let a test set (Host). */
function send(url: string, method: string, headers: Record<string, string>, body = ''): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('skein/ag-ui: AgUiServer security (auth hook, ownership, body limit, request guard, CORS, bad input)', () => {
  let server: AgUiServer;
  let url: string;
  let emulator: Emulator;

  before(async () => {
    emulator = await Emulator.start();
    const container = await createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { helper: { client: 'openai-chat', model: 'gpt-4.1' } },
    });
    const agent = container.get<AIAgent>(agentToken('helper'));
    server = new AgUiServer({
      agents: { helper: agent },
      authenticate: (req) => (req.headers.authorization === 'Bearer alice' ? 'alice' : req.headers.authorization === 'Bearer bob' ? 'bob' : undefined),
      corsOrigins: ['http://app.example.com'],
      maxBodyBytes: 10_000,
      logger: { warn: () => undefined, error: () => undefined },
    });
    url = `${await server.listen()}/agents/helper`;
  });
  after(async () => {
    await server.close();
    await emulator.stop();
  });

  it('no user: 401 before anything runs', async () => {
    const res = await postRaw(url, input('t-anon'));
    expect(res.status).to.equal(401);
    expect(JSON.parse(res.text).error).to.contain('Authentication required');
  });

  it("a thread belongs to the user who created it: another user gets not-found, the owner continues it", async () => {
    const alice = new HttpAgent({ url, headers: { authorization: 'Bearer alice' } });
    await say(alice, 'hello');
    const res = await postRaw(url, input(alice.threadId), { authorization: 'Bearer bob' });
    expect(res.status).to.equal(404);
    expect(JSON.parse(res.text).error).to.equal(`No thread "${alice.threadId}" for agent "helper"; start a new thread with a new threadId.`);
    const again = new HttpAgent({ url, threadId: alice.threadId, headers: { authorization: 'Bearer alice' } });
    const { events } = await runVerified(again);
    expect(events.map((e) => e.type)).to.deep.equal(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
  });

  it('bad input is a 4xx with a clear message', async () => {
    const auth = { authorization: 'Bearer alice' };
    const notJson = await postRaw(url, '{nope', auth);
    expect(notJson.status).to.equal(400);
    expect(JSON.parse(notJson.text).error).to.match(/^The body is not JSON \(.*\); send a RunAgentInput/);
    const missing = await postRaw(url, { threadId: 't1' }, auth);
    expect(missing.status).to.equal(400);
    expect(JSON.parse(missing.text).error).to.match(/^The body is not a valid RunAgentInput: runId: /);
    const badId = await postRaw(url, input('../../etc'), auth);
    expect(badId.status).to.equal(400);
    expect(JSON.parse(badId.text).error).to.contain('"threadId" must be 1 to 200 letters');
    const dup = await postRaw(url, input('t-dup', { messages: [{ id: 'a', role: 'user', content: 'x' }, { id: 'a', role: 'user', content: 'y' }] }), auth);
    expect(dup.status).to.equal(400);
    expect(JSON.parse(dup.text).error).to.equal('Every message needs its own id; "a" appears twice in "messages".');
    const big = await postRaw(url, input('t-big', { messages: [{ id: 'a', role: 'user', content: 'x'.repeat(20_000) }] }), auth);
    expect(big.status).to.equal(413);
    expect(JSON.parse(big.text).error).to.contain('this server accepts at most 10000');
    // Without a content-length (chunked), the limit holds as the body arrives: a 413 that closes the connection.
    const chunked = await new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      });
      req.on('error', reject);
      const body = JSON.stringify(input('t-chunked', { messages: [{ id: 'a', role: 'user', content: 'x'.repeat(20_000) }] }));
      for (let i = 0; i < body.length; i += 4_000) req.write(body.slice(i, i + 4_000));
      req.end();
    });
    expect(chunked.status).to.equal(413);
    expect(chunked.headers.connection).to.equal('close');
    expect(JSON.parse(chunked.text).error).to.equal('The body is over 10000 bytes, the most this server accepts.');
    const get = await fetch(url, { headers: auth });
    expect(get.status).to.equal(405);
    const unknown = await postRaw(url.replace('/helper', '/nobody'), input('t1'), auth);
    expect(unknown.status).to.equal(404);
    expect(JSON.parse(unknown.text).error).to.equal('No agent at /agents/nobody; agents are served at /agents/helper.');
  });

  it('every message the thread does not hold yet is checked against the AG-UI schema: a bad one is a 400 and the thread is unchanged', async () => {
    const auth = { authorization: 'Bearer alice' };
    const fresh = await postRaw(url, input('t-schema-new', { messages: [{ id: 'u1', role: 'user', content: 42 }] }), auth);
    expect(fresh.status).to.equal(400);
    expect(JSON.parse(fresh.text).error).to.match(/^The body is not a valid RunAgentInput: messages\.0/);
    const noId = await postRaw(url, input('t-schema-new', { messages: [{ role: 'user', content: 'hi' }] }), auth);
    expect(noId.status).to.equal(400);
    expect(JSON.parse(noId.text).error).to.match(/^The body is not a valid RunAgentInput: messages\.0/);

    const alice = new HttpAgent({ url, headers: auth });
    await say(alice, 'hello');
    const history = alice.messages.map((m) => ({ ...m }));
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    for (const bad of [
      { id: 'u2', role: 'user', content: { text: 'not a string or parts' } },
      { id: 'u2', role: 'robot', content: 'an unknown role' },
      { id: 'u2', role: 'user', content: [{ type: 'image', source: { type: 'url' } }] },
    ]) {
      const res = await postRaw(url, input(alice.threadId, { messages: [...history, bad] }), auth);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(JSON.parse(res.text).error).to.match(/^The body is not a valid RunAgentInput: messages\.2/);
    }
    // An edit in place of a stored user message is new input too (the thread forks there): checked.
    const edited = await postRaw(url, input(alice.threadId, { messages: [{ id: history[0]!.id, role: 'user', content: [{ type: 'text' }] }] }), auth);
    expect(edited.status).to.equal(400);
    expect(JSON.parse(edited.text).error).to.match(/^The body is not a valid RunAgentInput: messages\.0/);

    // Nothing of the refused requests reached the thread: a reload shows the two messages, and the next turn continues it.
    const reader = new HttpAgent({ url, threadId: alice.threadId, headers: auth });
    await runVerified(reader);
    expect(reader.messages.map((m) => m.id)).to.deep.equal(history.map((m) => m.id));
    await say(alice, 'again');
    expect(alice.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
  });

  it('CORS only for configured origins; the request guard refuses other Hosts, Origins and text bodies', async () => {
    const port = new URL(url).port;
    const preflight = await send(url, 'OPTIONS', { host: `127.0.0.1:${port}`, origin: 'http://app.example.com', 'access-control-request-method': 'POST' });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers['access-control-allow-origin']).to.equal('http://app.example.com');
    const allowed = await send(url, 'POST', { host: `127.0.0.1:${port}`, origin: 'http://app.example.com', 'content-type': 'application/json', authorization: 'Bearer alice' }, JSON.stringify(input('t-cors')));
    expect(allowed.status).to.equal(200);
    expect(allowed.headers['access-control-allow-origin']).to.equal('http://app.example.com');
    const otherPreflight = await send(url, 'OPTIONS', { host: `127.0.0.1:${port}`, origin: 'http://evil.example', 'access-control-request-method': 'POST' });
    expect(otherPreflight.status).to.equal(403);
    expect(otherPreflight.headers['access-control-allow-origin']).to.equal(undefined);
    const otherOrigin = await send(url, 'POST', { host: `127.0.0.1:${port}`, origin: 'http://evil.example', 'content-type': 'application/json', authorization: 'Bearer alice' }, JSON.stringify(input('t-evil')));
    expect(otherOrigin.status).to.equal(403);
    const rebound = await send(url, 'POST', { host: `attacker.example:${port}`, 'content-type': 'application/json', authorization: 'Bearer alice' }, JSON.stringify(input('t-host')));
    expect(rebound.status).to.equal(403);
    const text = await send(url, 'POST', { host: `127.0.0.1:${port}`, 'content-type': 'text/plain', authorization: 'Bearer alice' }, JSON.stringify(input('t-text')));
    expect(text.status).to.equal(415);
  });
});
