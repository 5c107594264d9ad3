import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REQUIRE = process.env.SKEIN_REQUIRE_SERVICES === '1';

/** A prefix unique to this test run, so parallel runs on one server never collide. */
export const RUN_ID = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

export async function redisAvailable(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Defines `body` when the service answers; otherwise one pending test saying how to enable it,
 * or (with SKEIN_REQUIRE_SERVICES=1) one failing test.
 */
export function withService(title: string, available: boolean, how: string, body: () => void): void {
  describe(title, () => {
    if (available) return body();
    if (REQUIRE) {
      it('needs its server (SKEIN_REQUIRE_SERVICES=1)', () => {
        throw new Error(`${title}: server not reachable; ${how}`);
      });
    } else {
      it(`skipped: server not reachable; ${how}`);
    }
  });
}

export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'skein-stores-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Drops `schema` (and everything in it) through a connection of its own. */
export async function dropSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await admin.end();
  }
}

/** Wraps a factory maker so every factory it made in a test is closed after that test (call inside a describe). */
export function closedAfterEach<A extends unknown[], F extends { close(): unknown }>(make: (...args: A) => F): (...args: A) => F {
  const made: F[] = [];
  afterEach(async () => {
    for (const f of made.splice(0)) await f.close();
  });
  return (...args) => {
    const f = make(...args);
    made.push(f);
    return f;
  };
}
