import { expect } from 'chai';
import { readdir } from 'node:fs/promises';
import sinon from 'sinon';
import { ConfigurationError } from '../../src/errors/skein-error.js';
import { corsHeaders, rawRequest as raw, type RawReply } from '../http/raw-request.js';
import { readSse, startFixture, type DevUIFixture } from './devui-fixture.js';

/** The error a promise rejects with (undefined when it resolves). */
const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

const errorOf = (reply: RawReply) => (JSON.parse(reply.text) as { error: { name: string; message: string } }).error;

describe('Dev UI: requests no other site can make (DNS rebinding, CSRF, tokens)', () => {
  let fx: DevUIFixture;
  let port: number;
  let auth: Record<string, string>;
  /** The thread index, watched: a refused request must neither read nor write it. */
  let index: { list: sinon.SinonSpy; get: sinon.SinonSpy; put: sinon.SinonSpy; delete: sinon.SinonSpy };

  beforeEach(async () => {
    fx = await startFixture();
    port = fx.devui.port;
    auth = { authorization: `Bearer ${fx.devui.token}` };
  });
  afterEach(async () => {
    sinon.restore();
    await fx.close();
  });

  /** A thread to protect, then spies on the index: whatever comes next must not touch it. */
  async function seedThenWatch(): Promise<string> {
    const response = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'assistant', text: 'My secret is plum' }) });
    const done = (await readSse(response)).find((e) => e.event === 'done')!.data.thread as { id: string };
    const threads = fx.devui.threads;
    index = { list: sinon.spy(threads, 'list'), get: sinon.spy(threads, 'get'), put: sinon.spy(threads, 'put'), delete: sinon.spy(threads, 'delete') };
    return done.id;
  }

  function expectUntouched(calls: number): void {
    expect(fx.emulator.requestsTo('/v1/chat/completions'), 'model calls').to.have.length(calls);
    expect([index.list.callCount, index.get.callCount, index.put.callCount, index.delete.callCount], 'thread index list/get/put/delete').to.deep.equal([0, 0, 0, 0]);
  }

  it('the issue replay: a rebound Host and Origin get 403 naming --allowed-host, even with the token; nothing is read or run', async () => {
    const id = await seedThenWatch();
    const rebound = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` };
    for (const path of ['/api/agents', '/api/threads', `/api/threads/${id}`, `/api/threads/${id}/json`, '/']) {
      const reply = await raw(fx.devui.url, { path, headers: { ...rebound, ...auth } });
      expect(reply.status, path).to.equal(403);
      expect(errorOf(reply)).to.include({ name: 'RequestRefusedError' });
      expect(errorOf(reply).message).to.contain(`Host "attacker.example:${port}" is not allowed`).and.contain('--allowed-host');
      expect(reply.text).to.not.contain('plum');
    }
    const chat = await raw(fx.devui.url, {
      method: 'POST',
      path: '/api/chat',
      headers: { ...rebound, 'content-type': 'text/plain' },
      body: JSON.stringify({ threadId: id, text: 'tell me the secret' }),
    });
    expect(chat.status).to.equal(403);
    const removal = await raw(fx.devui.url, { method: 'DELETE', path: `/api/threads/${id}?confirm=1`, headers: { ...rebound, ...auth, 'content-type': 'application/json' } });
    expect(removal.status).to.equal(403);
    expectUntouched(1);
    expect(await readdir(fx.threadsDir)).to.deep.equal([`${id}.json`]);
  });

  it('a rebound Host with a loopback Origin, and a loopback Host with a foreign or null Origin, are refused too', async () => {
    await seedThenWatch();
    const cases: Record<string, string>[] = [
      { host: `attacker.example:${port}`, origin: `http://127.0.0.1:${port}` },
      { host: `127.0.0.1:${port}`, origin: 'http://evil.example' },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port + 1}` }, // another local server's page: same site, other origin
      { host: `127.0.0.1:${port}`, origin: 'null' },
      { host: `127.0.0.1:${port + 1}` },
    ];
    for (const headers of cases) {
      const reply = await raw(fx.devui.url, { path: '/api/threads', headers: { ...headers, ...auth } });
      expect(reply.status, JSON.stringify(headers)).to.equal(403);
      expect(reply.text).to.not.contain('plum');
    }
    expectUntouched(1);
  });

  it('without the token every API call is 401 (the page itself loads), and runs nothing', async () => {
    const id = await seedThenWatch();
    for (const [method, path] of [['GET', '/api/agents'], ['GET', '/api/threads'], ['GET', `/api/threads/${id}`], ['GET', `/api/threads/${id}/json`], ['POST', '/api/chat'], ['POST', '/api/threads/import'], ['DELETE', `/api/threads/${id}?confirm=1`]]) {
      const response = await fetch(fx.devui.url + path!, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? JSON.stringify({ agent: 'assistant', threadId: id, text: 'hi' }) : undefined });
      expect(response.status, `${method} ${path}`).to.equal(401);
      const { error } = (await response.json()) as { error: { name: string; message: string } };
      expect(error.name).to.equal('RequestRefusedError');
      expect(error.message).to.contain('access token').and.contain('?token=').and.contain('--no-token');
    }
    const wrong = await fetch(`${fx.devui.url}/api/threads`, { headers: { authorization: 'Bearer not-the-token-at-all-000', cookie: `skein-token-${port}=also-not-the-token-0000` } });
    expect(wrong.status).to.equal(401);
    expectUntouched(1);
    const page = await fetch(`${fx.devui.url}/`);
    expect(page.status).to.equal(200);
    // No other site may frame it, and the token in its address is never sent on as a Referer.
    expect(page.headers.get('x-frame-options')).to.equal('DENY');
    expect(page.headers.get('content-security-policy')).to.equal("frame-ancestors 'none'");
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(await page.text()).to.not.contain('plum');
  });

  it('the printed token is traded for an HttpOnly SameSite=Strict cookie that authorizes the API; a wrong token gets no cookie', async () => {
    expect(fx.devui.pageUrl).to.equal(`${fx.devui.url}/?token=${fx.devui.token}`);
    const post = (token: unknown) => fetch(`${fx.devui.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    const wrong = await post('x'.repeat(32));
    expect(wrong.status).to.equal(401);
    expect(wrong.headers.get('set-cookie')).to.equal(null);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).to.contain('new one at each start');

    const right = await post(fx.devui.token);
    expect(right.status).to.equal(200);
    const cookie = right.headers.get('set-cookie')!;
    expect(cookie).to.equal(`skein-token-${port}=${fx.devui.token}; HttpOnly; SameSite=Strict; Path=/`);
    const threads = await fetch(`${fx.devui.url}/api/threads`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(threads.status).to.equal(200);

    // A restarted Dev UI has a new token: the old cookie no longer works.
    await fx.restart();
    expect(fx.devui.token).to.not.equal(cookie.split('=')[1]!.split(';')[0]);
    expect((await fetch(`${fx.devui.url}/api/threads`, { headers: { cookie: `skein-token-${fx.devui.port}=${cookie.split('=')[1]!.split(';')[0]}` } })).status).to.equal(401);
  });

  it('state-changing routes take application/json only: text/plain, form and multipart bodies get 415 and run nothing', async () => {
    const id = await seedThenWatch();
    const body = JSON.stringify({ threadId: id, text: 'What is my secret?' });
    const bodies: [string, string][] = [
      ['text/plain', body],
      ['text/plain;charset=UTF-8', body],
      ['application/x-www-form-urlencoded', `threadId=${id}&text=hi`],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="text"\r\n\r\nhi\r\n--x--\r\n`],
    ];
    for (const [type, payload] of bodies) {
      for (const path of ['/api/chat', '/api/threads/import', '/api/session']) {
        const response = await fetch(fx.devui.url + path, { method: 'POST', headers: { ...auth, 'content-type': type }, body: payload });
        expect(response.status, `${type} to ${path}`).to.equal(415);
        const { error } = (await response.json()) as { error: { name: string; message: string } };
        expect(error.message).to.equal(`POST requests must send content-type: application/json; got ${type.split(';')[0]}.`);
      }
    }
    const noType = await fetch(`${fx.devui.url}/api/threads/${id}?confirm=1`, { method: 'DELETE', headers: auth });
    expect(noType.status).to.equal(415);
    const stop = await fetch(`${fx.devui.url}/api/runs/whatever/stop`, { method: 'POST', headers: auth });
    expect(stop.status).to.equal(415);
    expectUntouched(1);
  });

  it('a body over 8 MiB is a 413 naming the limit that closes the connection, and runs nothing', async () => {
    const id = await seedThenWatch();
    const response = await fetch(`${fx.devui.url}/api/threads/import`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ threadId: id, pad: 'x'.repeat(8 * 1024 * 1024) }) });
    expect(response.status).to.equal(413);
    expect(response.headers.get('connection')).to.equal('close');
    const { error } = (await response.json()) as { error: { name: string; message: string } };
    expect(error).to.deep.equal({ name: 'RequestBodyTooLargeError', message: `The body is ${8 * 1024 * 1024 + JSON.stringify({ threadId: id, pad: '' }).length} bytes; this server accepts at most ${8 * 1024 * 1024}.` });
    expectUntouched(1);
  });

  it('answers no CORS preflight and sends no Access-Control header', async () => {
    await seedThenWatch();
    const preflight = await raw(fx.devui.url, {
      method: 'OPTIONS',
      path: '/api/chat',
      headers: { origin: `http://127.0.0.1:${port}`, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).to.equal(403);
    expect(errorOf(preflight).message).to.contain('no CORS preflight');
    expect(corsHeaders(preflight.headers)).to.deep.equal([]);
    const allowed = await fx.fetch('/api/threads', { headers: { origin: `http://127.0.0.1:${port}` } });
    const names: Record<string, string> = {};
    allowed.headers.forEach((value, name) => (names[name] = value));
    expect(corsHeaders(names)).to.deep.equal([]);
    expect(index.list.callCount).to.equal(1); // only the allowed request read the index
  });

  it('requests from the page\'s own origins (127.0.0.1, localhost, [::1]) with the token are served and run', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const reply = await raw(fx.devui.url, {
        method: 'POST',
        path: '/api/chat',
        headers: { host: `${host}:${port}`, origin: `http://${host}:${port}`, 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ agent: 'assistant', text: `hello from ${host}` }),
      });
      expect(reply.status, host).to.equal(200);
      expect(reply.text).to.contain('event: done');
    }
    const v6 = await raw(fx.devui.url, { path: '/api/agents', headers: { host: `[::1]:${port}`, origin: `http://[::1]:${port}`, ...auth } });
    expect(v6.status).to.equal(200);
    expect(fx.emulator.requestsTo('/v1/chat/completions')).to.have.length(2);
    expect(await readdir(fx.threadsDir)).to.have.length(2);
  });

  it('--allowed-host adds a host (with the port, or exactly name:port); others are still refused', async () => {
    await fx.close();
    fx = await startFixture({ allowedHosts: ['devbox.local', 'proxy.example:8443'] });
    port = fx.devui.port;
    auth = { authorization: `Bearer ${fx.devui.token}` };
    expect(fx.devui.allowedHosts).to.deep.equal([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `devbox.local:${port}`, 'proxy.example:8443']);
    const get = (host: string, origin?: string) => raw(fx.devui.url, { path: '/api/agents', headers: { host, ...(origin ? { origin } : {}), ...auth } });
    expect((await get(`devbox.local:${port}`, `http://devbox.local:${port}`)).status).to.equal(200);
    expect((await get('proxy.example:8443', 'https://proxy.example:8443')).status).to.equal(200);
    expect((await get(`proxy.example:${port}`)).status).to.equal(403);
    expect((await get(`devbox.local:${port + 1}`)).status).to.equal(403);
    expect((await get(`other.local:${port}`)).status).to.equal(403);
  });

  it('a token given in code is used (and a short one refused); the printed address carries it', async () => {
    await fx.close();
    const short = await failureOf(startFixture({ token: 'short' }));
    expect(short).to.be.instanceOf(ConfigurationError);
    expect((short as Error).message).to.contain('token: expected at least 16 characters, found 5');
    fx = await startFixture({ token: 'a-fixed-token-for-scripts' });
    expect(fx.devui.pageUrl).to.equal(`${fx.devui.url}/?token=a-fixed-token-for-scripts`);
    expect((await fetch(`${fx.devui.url}/api/agents`, { headers: { authorization: 'Bearer a-fixed-token-for-scripts' } })).status).to.equal(200);
  });

  it('a bad --allowed-host entry is a ConfigurationError that shows the entry', async () => {
    const error = await failureOf(startFixture({ allowedHosts: ['http://devbox.local/'] }));
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.contain('expected a host name or host:port').and.contain('"http://devbox.local/"');
  });

  it('token: false (--no-token) serves the API without a token, warns what that allows, and still checks Host and bodies', async () => {
    await fx.close();
    const warnings: string[] = [];
    fx = await startFixture({ token: false, warn: (line) => warnings.push(line) });
    expect(fx.devui.token).to.equal(undefined);
    expect(fx.devui.pageUrl).to.equal(fx.devui.url);
    expect(warnings).to.deep.equal([
      `Warning: the Dev UI's access token is off (--no-token): any program or user that can reach ${fx.devui.url} can run the configured agents and their tools (on this machine, with your permissions) and read, change and delete the threads in ${fx.threadsDir}.`,
    ]);
    expect((await fetch(`${fx.devui.url}/api/agents`)).status).to.equal(200);
    expect((await raw(fx.devui.url, { path: '/api/agents', headers: { host: `attacker.example:${fx.devui.port}` } })).status).to.equal(403);
    const plain = await fetch(`${fx.devui.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"agent":"assistant","text":"hi"}' });
    expect(plain.status).to.equal(415);
    expect(fx.emulator.requestsTo('/v1/chat/completions')).to.have.length(0);
  });

  it('a non-loopback host needs expose: without it nothing starts; with it a warning says what is exposed', async () => {
    await fx.close();
    const refused = await failureOf(startFixture({ host: '0.0.0.0' }));
    expect(refused).to.be.instanceOf(ConfigurationError);
    expect((refused as Error).message).to.contain('--host 0.0.0.0 would let other machines reach it').and.contain('--expose');

    const warnings: string[] = [];
    fx = await startFixture({ host: '0.0.0.0', expose: true, warn: (line) => warnings.push(line) });
    expect(fx.devui.url).to.equal(`http://127.0.0.1:${fx.devui.port}`);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.equal(
      `Warning: the Dev UI listens on 0.0.0.0:${fx.devui.port} (--expose), so other machines can reach it: whoever does and has the printed address with its token can run the configured agents and their tools (on this machine, with your permissions) and read, change and delete the threads in ${fx.threadsDir}. ` +
        `Traffic is plain HTTP. Browsers may use only 127.0.0.1:${fx.devui.port}, localhost:${fx.devui.port}, [::1]:${fx.devui.port}; add a name with --allowed-host.`,
    );
    expect((await fx.fetch('/api/agents')).status).to.equal(200);
  });
});
