import { expect } from 'chai';
import { toFile } from 'openai';
import { ConfigurationError } from '../../src/errors/skein-error.js';
import { Emulator } from '../../src/testing/index.js';
import { emulatorClientPerTest } from '../support/emulator.js';
import { corsHeaders, rawRequest, type RawReply } from '../http/raw-request.js';

const envelope = (reply: RawReply) => (JSON.parse(reply.text) as { error: { message: string; type: string; code: string } }).error;

describe('Emulator: requests no web page can make (host allowlist, origin, preflight, body types)', () => {
  const fx = emulatorClientPerTest();
  let host: string;

  beforeEach(() => {
    host = new URL(fx.url).host;
  });

  /** A JSON request as a browser page or script would send it, with the headers given. */
  const send = (path: string, headers: Record<string, string>, body?: unknown, method = body === undefined ? 'GET' : 'POST') =>
    rawRequest(fx.emulator.url, { method, path, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });

  it('the SDKs keep working on the programmatic emulator (Host 127.0.0.1:port), uploads and empty POSTs included', async () => {
    const assistant = await fx.client.beta.assistants.create({ model: 'gpt-4o', name: 'kept' });
    const file = await fx.client.files.create({ file: await toFile(Buffer.from('hello'), 'a.txt'), purpose: 'assistants' });
    expect(file.filename).to.equal('a.txt');
    const thread = await fx.client.beta.threads.create();
    const run = await fx.client.beta.threads.runs.create(thread.id, { assistant_id: assistant.id });
    // POST without a body: the SDK sends no content-type then.
    await fx.client.beta.threads.runs.cancel(run.id, { thread_id: thread.id }).catch(() => undefined);
    const cancel = fx.emulator.requests.find((r) => r.path.endsWith('/cancel'))!;
    expect(cancel.headers['content-type']).to.equal(undefined);
    expect((await fx.client.beta.assistants.list()).data.map((a) => a.name)).to.deep.equal(['kept']);
  });

  it('a rebound Host gets a 403 envelope naming --allowed-host, before any route: nothing recorded, created or read', async () => {
    await fx.client.beta.assistants.create({ model: 'gpt-4o', name: 'secret-assistant' });
    const before = fx.emulator.requests.length;
    const rebound = { host: `attacker.example:${fx.emulator.url.split(':').at(-1)}`, origin: `http://attacker.example:${fx.emulator.url.split(':').at(-1)}` };
    const create = await send('/v1/assistants', { ...rebound, 'content-type': 'application/json' }, { model: 'gpt-4o', name: 'planted' });
    expect(create.status).to.equal(403);
    expect(envelope(create)).to.include({ type: 'permission_error', code: 'request_refused_host' });
    expect(envelope(create).message).to.contain('is not allowed').and.contain('--allowed-host');
    const read = await send('/v1/assistants', rebound);
    expect(read.status).to.equal(403);
    expect(read.text).to.not.contain('secret-assistant');
    const chat = await send('/v1/chat/completions', { ...rebound, 'content-type': 'text/plain' }, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).to.equal(403);
    expect(fx.emulator.requests).to.have.length(before);
    expect((await fx.client.beta.assistants.list()).data.map((a) => a.name)).to.deep.equal(['secret-assistant']);
  });

  it('a page of another origin (a simple text/plain or form POST, no preflight) gets 403 and runs nothing', async () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${Number(host.split(':')[1]) + 1}`]) {
      const plain = await send('/v1/chat/completions', { host, origin, 'content-type': 'text/plain' }, body);
      expect(plain.status, origin).to.equal(403);
      expect(envelope(plain).code).to.equal('request_refused_origin');
      const form = await rawRequest(fx.emulator.url, {
        method: 'POST',
        path: '/v1/files',
        headers: { host, origin, 'content-type': 'multipart/form-data; boundary=x' },
        body: '--x\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nplanted\r\n--x--\r\n',
      });
      expect(form.status, origin).to.equal(403);
    }
    expect(fx.emulator.requests).to.deep.equal([]);
    expect((await fx.client.files.list()).data).to.deep.equal([]);
  });

  it('a browser\'s text/plain or url-encoded form body gets 415 even from an allowed origin; JSON from it is served', async () => {
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      for (const browser of [{ origin: fx.emulator.url }, { origin: `http://localhost:${host.split(':')[1]}` }]) {
        const reply = await send('/v1/chat/completions', { host, ...browser, 'content-type': type }, body);
        expect(reply.status, type).to.equal(415);
        expect(envelope(reply).message).to.equal(`POST requests must send content-type: application/json or multipart/form-data; got ${type}.`);
      }
    }
    expect(fx.emulator.requests).to.deep.equal([]);
    // A script (no Origin) that POSTs JSON with fetch's default text/plain is served, as before.
    const script = await send('/v1/chat/completions', { host, 'content-type': 'text/plain;charset=UTF-8' }, body);
    expect(script.status).to.equal(200);
    for (const origin of [fx.emulator.url, `http://localhost:${host.split(':')[1]}`]) {
      const reply = await send('/v1/chat/completions', { host, origin, 'content-type': 'application/json' }, body);
      expect(reply.status, origin).to.equal(200);
      expect(JSON.parse(reply.text).choices[0].message.content).to.contain('You said: "hi"');
    }
    expect(fx.emulator.requestsTo('/v1/chat/completions')).to.have.length(3);
  });

  it('answers no CORS preflight and never sends an Access-Control header', async () => {
    const preflight = await send('/v1/chat/completions', { host, origin: fx.emulator.url, 'access-control-request-method': 'POST' }, undefined, 'OPTIONS');
    expect(preflight.status).to.equal(403);
    expect(envelope(preflight).code).to.equal('request_refused_preflight');
    expect(corsHeaders(preflight.headers)).to.deep.equal([]);
    const served = await send('/v1/chat/completions', { host, origin: fx.emulator.url, 'content-type': 'application/json' }, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(corsHeaders(served.headers)).to.deep.equal([]);
  });

  it('allowedHosts adds hosts (e.g. a container name); other names are still refused', async () => {
    const named = await Emulator.start({ allowedHosts: ['emulator.internal'] });
    try {
      const namedPort = new URL(named.url).port;
      const chat = (hostHeader: string) =>
        rawRequest(named.url, {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { host: hostHeader, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
        });
      expect((await chat(`emulator.internal:${namedPort}`)).status).to.equal(200);
      expect((await chat(`127.0.0.1:${namedPort}`)).status).to.equal(200);
      expect((await chat(`other.internal:${namedPort}`)).status).to.equal(403);
      expect(named.requestsTo('/v1/chat/completions')).to.have.length(2);
    } finally {
      await named.stop();
    }
  });

  it('a bad allowedHosts entry is a ConfigurationError that shows the entry', async () => {
    const error = await Emulator.start({ allowedHosts: ['https://emulator.internal/v1'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.contain('"https://emulator.internal/v1"');
  });
});
