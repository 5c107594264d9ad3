import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  type ChatMessage,
  ChatMessageStoreFactory,
  MessageCountReducer,
  SerializationError,
  SerializationRegistry,
  SerializationRegistryImpl,
  StoreError,
  createContainer,
  messageText,
} from 'skein';
import { SqliteChatMessageStoreFactory, sqliteStorePlugin } from 'skein/store-sqlite';
import { closedAfterEach, tempDir } from './services.js';
import { openRawSqlite } from './raw-sqlite.js';

const u = (t: string): ChatMessage => ({ role: 'user', contents: [{ kind: 'text', text: t }] });

describe('SQLite store specifics', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  // Registered before the folder's removal, so the factories close first.
  const make = closedAfterEach(
    (options: Partial<ConstructorParameters<typeof SqliteChatMessageStoreFactory>[0]> = {}) =>
      new SqliteChatMessageStoreFactory({ path: join(dir.path, 'db', 'threads.db'), ...options }),
  );
  afterEach(() => dir.remove());

  it('binds its factory as the "sqlite" store and its thread type in a container', () => {
    const container = createContainer({ plugins: [sqliteStorePlugin({ path: join(dir.path, 'p.db') })] });
    const factory = container.get<ChatMessageStoreFactory>(ChatMessageStoreFactory, { name: 'sqlite' });
    expect(factory).to.be.instanceOf(SqliteChatMessageStoreFactory);
    const registry = container.get<SerializationRegistry>(SerializationRegistry);
    expect(registry.threadTypes()).to.include('sqlite');
    expect((factory as SqliteChatMessageStoreFactory).serializationRegistry).to.equal(registry);
    (factory as SqliteChatMessageStoreFactory).close();
  });

  it('applies its reducer when history is read, keeping everything stored', async () => {
    const f = make({ reducer: new MessageCountReducer(2) });
    const store = f.create();
    await store.addMessages([u('1'), u('2'), u('3')]);
    expect((await store.listMessages()).map(messageText)).to.deep.equal(['2', '3']);
    const raw = make();
    expect(await (await raw.restore(await store.serialize(), { path: '$.store', version: 1, registry: SerializationRegistryImpl.withDefaults() })).listMessages()).to.have.length(3);
  });

  it('prunes only threads idle longer than the TTL', async () => {
    const f = make({ ttlSeconds: 60 });
    const store = f.create();
    await store.addMessages([u('kept')]);
    expect(await f.prune()).to.equal(0);
    expect(await f.prune(new Date(Date.now() + 61_000))).to.equal(1);
    expect(await store.listMessages()).to.deep.equal([]);
  });

  it('rejects a tampered row with a SerializationError naming it', async () => {
    const f = make();
    const store = f.create();
    await store.addMessages([u('hi')]);
    const db = openRawSqlite(f.options.path);
    db.run('UPDATE skein_messages SET body = ? WHERE thread_key = ?', '{"role":"user","contents":[],"__proto__":{}}', store.key);
    db.close();
    const error = await store.listMessages().catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SerializationError);
    expect((error as SerializationError).path).to.equal(`sqlite:${store.key}#1.__proto__`);
  });

  it('fails with a StoreError when the file cannot be opened', async () => {
    writeFileSync(join(dir.path, 'a-file'), 'x');
    const f = make({ path: join(dir.path, 'a-file', 'threads.db') });
    const error = await f.create().listMessages().catch((e: unknown) => e);
    expect(error).to.be.instanceOf(StoreError);
    expect((error as StoreError).store).to.equal('sqlite');
  });

  it('rejects bad retention options with a StoreError', () => {
    expect(() => make({ maxMessages: 0 })).to.throw(StoreError, /maxMessages/);
    expect(() => make({ ttlSeconds: -1 })).to.throw(StoreError, /ttlSeconds/);
  });
});
