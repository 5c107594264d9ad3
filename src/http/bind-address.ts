import { isIP } from 'node:net';
import { ConfigurationError } from '../errors/skein-error.js';

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackAddress(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

/**
 * Refuses to listen on a non-loopback address unless the user asked for it explicitly: a local
 * dev server that other machines can reach is a decision, not a default.
 */
export function assertBindable(host: string, expose: boolean, server: string, flag: string): void {
  if (expose || isLoopbackAddress(host)) return;
  throw new ConfigurationError(
    `${server} listens on loopback addresses only; --host ${host} would let other machines reach it. ` +
      `Add ${flag} to do that on purpose, or use --host 127.0.0.1.`,
  );
}

/** True for 0.0.0.0 and ::, which listen on every interface. */
export function isWildcardAddress(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === '0.0.0.0' || bare === '::';
}
