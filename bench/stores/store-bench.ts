/**
 * `npm run bench:stores`: per store, the latency of appending one turn and of reading the last
 * 20 messages at thread lengths 10, 1,000 and 10,000, and the ratio between the longest and the
 * shortest (near 1 means the cost does not grow with the thread). Not a test: it asserts nothing.
 * SQLite is measured with `durability: 'full'` (the default) and `'normal'`, on the driver this
 * Node picks. Redis and PostgreSQL are measured when they answer at REDIS_URL / DATABASE_URL.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ChatMessage, ChatMessageStoreFactory } from 'skein';
import { InMemoryChatMessageStoreFactory } from 'skein';
import { PostgresChatMessageStoreFactory } from 'skein/store-postgres';
import { RedisChatMessageStoreFactory } from 'skein/store-redis';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';

const LENGTHS = [10, 1_000, 10_000];
const SAMPLES = 50;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `bench${Date.now().toString(36)}`;

const message = (i: number): ChatMessage => ({
  role: i % 2 ? 'assistant' : 'user',
  contents: [{ kind: 'text', text: `message ${i}: ${'lorem ipsum '.repeat(8)}` }],
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(factory: ChatMessageStoreFactory, length: number): Promise<{ append: number; read: number }> {
  const store = factory.create({ provider: 'bench' });
  for (let filled = 0; filled < length; filled += 500) {
    await store.addMessages(Array.from({ length: Math.min(500, length - filled) }, (_, i) => message(filled + i)));
  }
  const appends: number[] = [];
  const reads: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    let t = performance.now();
    await store.addMessages([message(i), message(i + 1)]);
    appends.push(performance.now() - t);
    t = performance.now();
    await store.listMessages({ last: 20 });
    reads.push(performance.now() - t);
  }
  await store.clear();
  return { append: median(appends), read: median(reads) };
}

async function bench(name: string, make: () => Promise<ChatMessageStoreFactory & { close?: () => unknown }>): Promise<void> {
  let factory: (ChatMessageStoreFactory & { close?: () => unknown }) | undefined;
  try {
    factory = await make();
    const results: { append: number; read: number }[] = [];
    for (const length of LENGTHS) results.push(await measure(factory, length));
    const ms = (v: number) => `${v.toFixed(3)} ms`.padStart(11);
    console.log(`\n${name}`);
    console.log(`  ${'length'.padEnd(8)} ${'append'.padStart(11)} ${'read last 20'.padStart(13)}`);
    LENGTHS.forEach((length, i) => console.log(`  ${String(length).padEnd(8)} ${ms(results[i]!.append)} ${ms(results[i]!.read).padStart(13)}`));
    const first = results[0]!;
    const last = results[results.length - 1]!;
    console.log(`  ratio ${LENGTHS.at(-1)}/${LENGTHS[0]}: append ${(last.append / first.append).toFixed(2)}x, read last 20 ${(last.read / first.read).toFixed(2)}x`);
  } catch (error) {
    console.log(`\n${name}: skipped (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    await factory?.close?.();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'skein-bench-'));
try {
  console.log(`Store benchmark: median of ${SAMPLES} appends (one 2-message turn) and reads of the last 20 messages.`);
  await bench('in-memory', async () => new InMemoryChatMessageStoreFactory());
  // Durability costs a disk sync per append (`full`, the default) or only at checkpoints (`normal`).
  for (const durability of ['full', 'normal'] as const) {
    const path = join(dir, `bench-${durability}.db`);
    await bench(`sqlite (file, WAL, durability ${durability}, ${new SqliteChatMessageStoreFactory({ path }).driver})`, async () => new SqliteChatMessageStoreFactory({ path, durability }));
  }
  await bench(`redis (${REDIS_URL})`, async () => {
    const f = new RedisChatMessageStoreFactory({ url: REDIS_URL, keyPrefix: `skein-${RUN}:`, connectTimeoutMs: 2000, durabilityCheck: false });
    await f.create().listMessages();
    return f;
  });
  const pgFactory = new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema: `skein_${RUN}`, connectTimeoutMs: 2000, durabilityCheck: false });
  await bench(`postgres (${pgFactory.redactedConnectionString})`, async () => {
    const f = new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema: `skein_${RUN}`, durabilityCheck: false });
    await f.migrate();
    return f;
  });
  await pgFactory.run((pool) => pool.query(`DROP SCHEMA IF EXISTS "skein_${RUN}" CASCADE`)).catch(() => {});
  await pgFactory.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
