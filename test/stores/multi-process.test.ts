import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type ChatMessageStoreFactory, messageText } from 'skein';
import { PostgresChatMessageStoreFactory } from 'skein/store-postgres';
import { RedisChatMessageStoreFactory } from 'skein/store-redis';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { Redis } from 'ioredis';
import { SQLITE_DRIVERS } from './raw-sqlite.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, dropSchema, postgresAvailable, redisAvailable, tempDir, withService } from './services.js';

const WORKER = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'append-worker.js');
const TURNS = 25;
const redisUp = await redisAvailable();
const postgresUp = await postgresAvailable();

interface Worker {
  ready: Promise<void>;
  done: Promise<{ conflicts: number }>;
  go(): void;
}

function startWorker(store: string, config: Record<string, string>, state: unknown, worker: string): Worker {
  const child = spawn(process.execPath, [WORKER, JSON.stringify({ store, config, state, worker, turns: TURNS })], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('ready\n')) onReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ conflicts: number }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      onReady();
      if (code !== 0) reject(new Error(`worker ${worker} exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.slice(stdout.indexOf('ready\n') + 6)) as { conflicts: number });
    });
  });
  return { ready, done, go: () => child.stdin.end('go\n') };
}

/** Two processes append to one thread at once; every turn must be there once, never interleaved. */
async function raceTwoProcesses(store: string, config: Record<string, string>, factory: ChatMessageStoreFactory): Promise<void> {
  const thread = factory.create({ provider: 'test' });
  const state = await thread.serialize();
  const workers = [startWorker(store, config, state, 'A'), startWorker(store, config, state, 'B')];
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
  const results = await Promise.all(workers.map((w) => w.done));
  if (process.env.DEBUG_STORES) console.log(store, results);
  const texts = (await thread.listMessages()).map(messageText);
  expect(texts).to.have.length(2 * TURNS * 3);
  const next = { A: 0, B: 0 };
  for (let i = 0; i < texts.length; i += 3) {
    const [worker, turn] = texts[i]!.split(':') as ['A' | 'B', string];
    expect(texts.slice(i, i + 3), `messages ${i}..${i + 2}`).to.deep.equal([`${worker}:${turn}:q`, `${worker}:${turn}:a1`, `${worker}:${turn}:a2`]);
    expect(Number(turn), `turn order of ${worker}`).to.equal(next[worker]++);
  }
  expect(next).to.deep.equal({ A: TURNS, B: TURNS });
}

describe('Stores across processes: two app instances append to one thread', function () {
  this.timeout(60_000);

  for (const driver of SQLITE_DRIVERS) {
    it(`SQLite file (${driver}): every turn lands once, none interleaved`, async () => {
      const dir = tempDir();
      const path = join(dir.path, 'shared.db');
      const factory = new SqliteChatMessageStoreFactory({ path, driver });
      try {
        await raceTwoProcesses('sqlite', { path, driver }, factory);
      } finally {
        factory.close();
        dir.remove();
      }
    });
  }

  withService('Redis', redisUp, 'start Redis on 127.0.0.1:6379 or set REDIS_URL', () => {
    const keyPrefix = `skein-test:${RUN_ID}:mp:`;
    it('Redis: every turn lands once, none interleaved', async () => {
      const factory = new RedisChatMessageStoreFactory({ url: REDIS_URL, keyPrefix });
      try {
        await raceTwoProcesses('redis', { url: REDIS_URL, keyPrefix }, factory);
      } finally {
        await factory.close();
        const admin = new Redis(REDIS_URL);
        const keys = await admin.keys(`${keyPrefix}*`);
        if (keys.length) await admin.del(...keys);
        await admin.quit();
      }
    });
  });

  withService('PostgreSQL', postgresUp, 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL', () => {
    const schema = `skein_${RUN_ID}_mp`;
    it('PostgreSQL: every turn lands once, none interleaved', async () => {
      const factory = new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema });
      try {
        await factory.migrate();
        await raceTwoProcesses('postgres', { connectionString: DATABASE_URL, schema }, factory);
      } finally {
        await factory.close();
        await dropSchema(schema);
      }
    });
  });
});
