import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { AccessToken } from '../../src/http/access-token.js';
import { isLoopbackAddress } from '../../src/http/bind-address.js';
import { LocalRequestGuard } from '../../src/http/local-request-guard.js';

/** Only what the guard reads of a request: method and headers. */
const request = (headers: Record<string, string>, method = 'GET') => ({ method, headers }) as unknown as IncomingMessage;

describe('LocalRequestGuard and AccessToken (the checks every local server shares)', () => {
  it('matches Host by name and port, case-insensitively; a missing port means 80', () => {
    const guard = new LocalRequestGuard({ port: 4310 });
    expect(guard.check(request({ host: 'LOCALHOST:4310' }))).to.equal(undefined);
    expect(guard.check(request({ host: '[::1]:4310' }))).to.equal(undefined);
    expect(guard.check(request({ host: '127.0.0.1' }))?.reason).to.equal('host');
    expect(guard.check(request({}))?.reason).to.equal('host');
    expect(guard.check(request({ host: '127.0.0.1:4310.evil' }))?.reason).to.equal('host');
    expect(new LocalRequestGuard({ port: 80 }).check(request({ host: 'localhost' }))).to.equal(undefined);
  });

  it('takes allowed hosts as names, name:port or bare IPv6, and refuses URLs', () => {
    const guard = new LocalRequestGuard({ port: 4010, allowedHosts: ['Devbox.Local', 'proxy.example:443', '::2'] });
    expect(guard.allowedHosts).to.deep.equal(['127.0.0.1:4010', 'localhost:4010', '[::1]:4010', 'devbox.local:4010', '[::2]:4010', 'proxy.example:443']);
    expect(guard.check(request({ host: 'proxy.example', origin: 'https://proxy.example' }))).to.equal(undefined);
    expect(guard.check(request({ host: '[::2]:4010' }))).to.equal(undefined);
    expect(() => new LocalRequestGuard({ port: 1, allowedHosts: ['devbox/x'], allowedHostHint: '--allowed-host' })).to.throw(/--allowed-host: expected a host name or host:port/);
  });

  it('an Origin must name an allowed host with the right port; null and non-http schemes are refused', () => {
    const guard = new LocalRequestGuard({ port: 4310 });
    const host = 'localhost:4310';
    expect(guard.check(request({ host, origin: 'http://127.0.0.1:4310' }))).to.equal(undefined);
    for (const origin of ['http://localhost', 'https://localhost:4310.evil.example', 'null', 'file://', 'chrome-extension://abc']) {
      expect(guard.check(request({ host, origin }))?.reason, origin).to.equal('origin');
    }
  });

  it('content types: media type without parameters; browser-bodies checks only bodies a browser sends', () => {
    const always = new LocalRequestGuard({ port: 1 });
    expect(always.check(request({ host: 'localhost:1', 'content-type': 'Application/JSON; charset=utf-8' }, 'POST'))).to.equal(undefined);
    expect(always.check(request({ host: 'localhost:1' }, 'DELETE'))?.status).to.equal(415);
    const browsers = new LocalRequestGuard({ port: 1, contentTypeRule: 'browser-bodies' });
    const host = 'localhost:1';
    expect(browsers.check(request({ host, 'content-length': '2', 'content-type': 'text/plain' }, 'POST'))).to.equal(undefined); // a script
    expect(browsers.check(request({ host, origin: 'http://localhost:1' }, 'POST'))).to.equal(undefined); // no body
    expect(browsers.check(request({ host, origin: 'http://localhost:1', 'content-length': '0' }, 'POST'))).to.equal(undefined);
    expect(browsers.check(request({ host, origin: 'http://localhost:1', 'content-length': '2', 'content-type': 'text/plain' }, 'POST'))?.status).to.equal(415);
    expect(browsers.check(request({ host, origin: 'http://localhost:1', 'transfer-encoding': 'chunked' }, 'POST'))?.status).to.equal(415);
    // Node's fetch sends Sec-Fetch-Mode too: not a browser signal.
    expect(browsers.check(request({ host, 'sec-fetch-mode': 'cors', 'content-length': '2', 'content-type': 'text/plain' }, 'POST'))).to.equal(undefined);
  });

  it('AccessToken: bearer or its own cookie, compared whole; the cookie name carries the port', () => {
    const token = new AccessToken(4310, 'a'.repeat(32));
    expect(token.isPresentedBy(request({ authorization: `Bearer ${'a'.repeat(32)}` }))).to.equal(true);
    expect(token.isPresentedBy(request({ cookie: `other=1; skein-token-4310=${'a'.repeat(32)}` }))).to.equal(true);
    expect(token.isPresentedBy(request({ cookie: `skein-token-4311=${'a'.repeat(32)}` }))).to.equal(false);
    expect(token.isPresentedBy(request({ authorization: `Bearer ${'a'.repeat(31)}` }))).to.equal(false);
    expect(token.check(request({}), 'open the printed address.')?.status).to.equal(401);
    expect(() => new AccessToken(1, 'short')).to.throw(RangeError);
  });

  it('loopback addresses: 127/8, ::1, localhost; not 0.0.0.0 or a LAN address', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'].map(isLoopbackAddress)).to.deep.equal([true, true, true, true, true, true]);
    expect(['0.0.0.0', '::', '192.168.1.5', 'devbox.local'].map(isLoopbackAddress)).to.deep.equal([false, false, false, false]);
  });
});
