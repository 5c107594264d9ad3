import { expect } from 'chai';
import { Redis } from 'ioredis';
import { rm } from 'node:fs/promises';
import { ThreadConflictError } from 'skein';
import { AgUiServer, type AgUiThreadStore, PostgresAgUiThreadStore, RedisAgUiThreadStore } from 'skein/ag-ui';
import { Emulator } from 'skein/testing';
import { DATABASE_URL, REDIS_URL, RUN_ID, dropSchema } from '../stores/services.js';
import { HttpAgent, PG_SCHEMA, agentsOn, lastText, runVerified, say, tempDir } from './ag-ui-fixture.js';

describe('skein/ag-ui: two server instances on one PostgreSQL (PostgresAgUiThreadStore + the postgres message store)', () => {
  let emulator: Emulator;
  const dirs: string[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  const urls: string[] = [];
  const schema = `${PG_SCHEMA}_records`;

  before(async () => {
    emulator = await Emulator.start();
    for (let i = 0; i < 2; i++) {
      const dir = await tempDir();
      dirs.push(dir);
      const setup = await agentsOn(emulator, dir, { deleted: [] });
      const threads = new PostgresAgUiThreadStore({ connectionString: DATABASE_URL, schema });
      await threads.migrate();
      const server = new AgUiServer({ agents: { helper: setup.agents['chat-postgres'] }, threads, logger: { warn: () => undefined, error: () => undefined } });
      urls.push(`${await server.listen()}/agents/helper`);
      closers.push(() => server.close(), () => threads.close(), () => setup.close());
    }
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
    await emulator.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    await dropSchema(schema);
    // Only this run's keys: the Redis server is shared.
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${RUN_ID}:ag-ui:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
    await dropSchema(PG_SCHEMA);
  });

  it('a conversation started on one instance continues on the other, and a reload there reads it', async () => {
    const page = new HttpAgent({ url: urls[0]! });
    await say(page, 'My name is Ada.');
    const other = new HttpAgent({ url: urls[1]!, threadId: page.threadId, initialMessages: page.messages });
    await say(other, 'What is my name?');
    expect(lastText(other)).to.equal('Your name is Ada.');
    const reload = new HttpAgent({ url: urls[0]!, threadId: page.threadId });
    await runVerified(reload);
    expect(reload.messages.map((m) => m.content)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!', 'What is my name?', 'Your name is Ada.']);
  });

  const stores: [string, () => AgUiThreadStore & { close(): Promise<void> }][] = [
    ['PostgresAgUiThreadStore', () => new PostgresAgUiThreadStore({ connectionString: DATABASE_URL, schema })],
    ['RedisAgUiThreadStore', () => new RedisAgUiThreadStore({ url: REDIS_URL, keyPrefix: `${RUN_ID}:ag-ui:` })],
  ];
  for (const [name, make] of stores) {
    it(`${name}: a save against a version that moved on is a ThreadConflictError and writes nothing`, async () => {
      const store = make();
      const id = `t-conflict-${name}`;
      try {
        const record = { agent: 'helper', owner: '', thread: { $type: 'unstarted', version: 1, provider: 'openai-chat' } };
        expect(await store.save(id, record, undefined)).to.equal(1);
        expect(await store.save(id, { ...record, owner: 'a' }, 1)).to.equal(2);
        const stale = await store.save(id, { ...record, owner: 'b' }, 1).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(stale).to.be.instanceOf(ThreadConflictError);
        expect((stale as Error).message).to.equal(`AG-UI thread ${id} changed since this run read it (expected version 1, found 2); send the run again.`);
        expect(await store.save(id, record, undefined).catch((e: unknown) => e)).to.be.instanceOf(ThreadConflictError);
        expect(await store.load(id)).to.deep.include({ owner: 'a', version: 2 });
        expect(await store.load(`${id}-none`)).to.equal(undefined);
      } finally {
        await store.close();
      }
    });
  }
});
