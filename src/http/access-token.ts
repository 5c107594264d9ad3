import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { RequestRefusedError } from './local-request-guard.js';

/**
 * A per-start secret for a local server (as Jupyter does): the address the server prints carries
 * it (`?token=...`), the page trades it once for an HttpOnly, SameSite=Strict cookie, and every
 * API call must then present the cookie, or `Authorization: Bearer <token>` for scripts. A page
 * on another site can neither read the token nor make the browser send the cookie.
 */
export class AccessToken {
  /** Shorter tokens are refused: a token stands between any local program and your agents. */
  static readonly MIN_LENGTH = 16;
  readonly value: string;
  /** Cookies ignore ports: the name carries the port so two servers on one host keep their own. */
  readonly cookieName: string;

  constructor(port: number, value: string = randomBytes(24).toString('base64url')) {
    if (value.length < AccessToken.MIN_LENGTH) throw new RangeError(`An access token needs at least ${AccessToken.MIN_LENGTH} characters.`);
    this.value = value;
    this.cookieName = `skein-token-${port}`;
  }

  /** Constant-time comparison, so the token cannot be guessed byte by byte from response times. */
  matches(candidate: unknown): boolean {
    if (typeof candidate !== 'string') return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(this.value);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** Whether the request carries the token (cookie or bearer header). */
  isPresentedBy(req: IncomingMessage): boolean {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    return this.matches(bearer) || this.matches(readCookie(req.headers.cookie, this.cookieName));
  }

  /** The refusal for a request without the token, or undefined. `where` says how to get it. */
  check(req: IncomingMessage, where: string): RequestRefusedError | undefined {
    if (this.isPresentedBy(req)) return undefined;
    return new RequestRefusedError(401, 'token', `This server needs its access token: ${where}`);
  }

  /** The Set-Cookie value that hands the token to the page: not readable by scripts, never sent cross-site. */
  cookie(): string {
    return `${this.cookieName}=${this.value}; HttpOnly; SameSite=Strict; Path=/`;
  }
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
