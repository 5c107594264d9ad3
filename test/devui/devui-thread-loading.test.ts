import { expect } from 'chai';
import type { ThreadSummary } from '../../src/devui/index.js';
import { readSse, startFixture, type DevUIFixture } from './devui-fixture.js';

type Summary = ThreadSummary;
interface Loaded {
  thread: Summary;
  loaded: 'new' | 'existing' | 'copy';
  message: string;
}

describe('Dev UI: loading a thread whose history is already listed (SQLite and service threads)', () => {
  let fx: DevUIFixture;

  beforeEach(async () => {
    fx = await startFixture({ config: 'sqlite' });
  });
  afterEach(async () => {
    await fx.close();
  });

  const json = async <T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
    const response = await fx.fetch(path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
    return { status: response.status, body: (await response.json()) as T };
  };
  const say = async (body: Record<string, unknown>) => {
    const events = await readSse(await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    return {
      text: events.filter((e) => e.event === 'delta').map((e) => e.data.text).join(''),
      thread: events.find((e) => e.event === 'done')?.data.thread as Summary,
    };
  };
  const list = async () => (await json<{ threads: Summary[] }>('/api/threads')).body.threads;
  const messagesOf = async (id: string) => (await json<{ messages: unknown[] }>(`/api/threads/${id}`)).body.messages;
  const download = async (id: string) => (await fx.fetch(`/api/threads/${id}/json`)).json() as Promise<{ $type: string; store: { key: string } }>;
  const load = (serialized: unknown, extra: Record<string, unknown> = {}) => json<Loaded>('/api/threads/import', { method: 'POST', body: JSON.stringify({ serialized, ...extra }) });

  it('a downloaded SQLite thread loaded back opens the listed entry and says so: no second entry on the same store key', async () => {
    const original = (await say({ agent: 'assistant', text: 'My name is Ann' })).thread;
    expect(original).to.include({ kind: 'store', type: 'sqlite' });
    const file = await download(original.id);
    expect(file.$type).to.equal('sqlite');
    expect(original.storeKey).to.equal(file.store.key);

    const loaded = await load(file);
    expect(loaded.status).to.equal(200);
    expect(loaded.body.loaded).to.equal('existing');
    expect(loaded.body.thread.id).to.equal(original.id);
    expect(loaded.body.message).to.equal(
      `This thread is already listed as "My name is Ann" (sqlite store, key ${file.store.key}); opened it instead of adding a second entry on the same history. Load it as a copy to get an independent thread.`,
    );
    expect((await list()).map((t) => t.id)).to.deep.equal([original.id]);
  });

  it('"as": "copy" makes a real copy: a new store key with the history copied; turns and a delete on the copy leave the original whole', async () => {
    const original = (await say({ agent: 'assistant', text: 'My name is Ann' })).thread;
    const loaded = await load(await download(original.id), { as: 'copy' });
    expect(loaded.status).to.equal(201);
    const copy = loaded.body.thread;
    expect(loaded.body.loaded).to.equal('copy');
    expect(copy).to.include({ agent: 'assistant', title: 'My name is Ann (copy)', kind: 'store', type: 'sqlite' });
    expect(copy.id).to.not.equal(original.id);
    expect(copy.storeKey).to.be.a('string').and.not.equal(original.storeKey);
    expect(loaded.body.message).to.equal(`Loaded as a copy: 2 messages copied to a new sqlite store key (${copy.storeKey}); the original is unchanged.`);
    expect(await messagesOf(copy.id)).to.deep.equal(await messagesOf(original.id));

    // The copy remembers the history it was given, and goes its own way.
    expect((await say({ threadId: copy.id, text: "What's my name?" })).text).to.equal('Your name is Ann.');
    await say({ threadId: copy.id, text: 'My name is Zed' });
    expect(await messagesOf(copy.id)).to.have.length(6);
    expect(await messagesOf(original.id)).to.have.length(2);

    const deleted = await json<{ deleted: boolean; historyKept: boolean }>(`/api/threads/${copy.id}?confirm=1`, { method: 'DELETE' });
    expect(deleted.body).to.include({ deleted: true, historyKept: false });
    expect(await messagesOf(original.id)).to.have.length(2);
    expect((await say({ threadId: original.id, text: "What's my name?" })).text).to.equal('Your name is Ann.');
  });

  it('a service thread already listed opens its entry; a copy is refused with a typed error (the service has no copy) and adds nothing', async () => {
    const original = (await say({ agent: 'responses', text: 'My name is Sam' })).thread;
    expect(original.kind).to.equal('service');
    const file = await download(original.id);
    const loaded = await load(file);
    expect(loaded.body).to.deep.include({ loaded: 'existing' });
    expect(loaded.body.thread.id).to.equal(original.id);
    expect(loaded.body.message).to.contain(`(service thread ${original.serviceThreadId})`);
    const copy = await json<{ error: { name: string; message: string } }>('/api/threads/import', { method: 'POST', body: JSON.stringify({ serialized: file, as: 'copy' }) });
    expect(copy.status).to.equal(409);
    expect(copy.body.error.name).to.equal('ThreadCompatibilityError');
    expect(copy.body.error.message).to.contain(`Cannot load service thread ${original.serviceThreadId} as a copy`);
    expect((await list()).map((t) => t.id)).to.deep.equal([original.id]);
    const bad = await json<{ error: { message: string } }>('/api/threads/import', { method: 'POST', body: JSON.stringify({ serialized: file, as: 'clone' }) });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.contain('"as" must be "copy"');
  });

  it('each thread says exactly what Delete deletes: title, store and key, or the service thread', async () => {
    const store = (await say({ agent: 'assistant', text: 'keep in sqlite' })).thread;
    const service = (await say({ agent: 'responses', text: 'keep on the service' })).thread;
    const byId = new Map((await list()).map((t) => [t.id, t]));
    expect(byId.get(store.id)!.deletion).to.equal(`Deletes "keep in sqlite": its history in the sqlite store (key ${store.storeKey}) is deleted, then the thread is removed from the Dev UI.`);
    expect(byId.get(service.id)!.deletion).to.equal(
      `Deletes "keep on the service": service thread ${service.serviceThreadId} (openai-responses) is kept by the service and will be deleted there too, then removed from the Dev UI.`,
    );
  });

  it('two entries an older Dev UI left on one store key: each names the other, and deleting one keeps the history for the other', async () => {
    const original = (await say({ agent: 'assistant', text: 'My name is Ann' })).thread;
    // What the old import did: a second index entry holding the same serialized thread.
    const entry = (await fx.devui.threads.get(original.id))!;
    await fx.devui.threads.put({ ...entry, id: 'old-duplicate', title: 'My name is Ann (loaded)' });
    const byId = new Map((await list()).map((t) => [t.id, t]));
    expect(byId.get('old-duplicate')!.deletion).to.equal(
      `Removes "My name is Ann (loaded)" from the Dev UI only: its history in the sqlite store (key ${original.storeKey}) is also used by "My name is Ann", so it is kept.`,
    );
    const deleted = await json<{ historyKept: boolean }>('/api/threads/old-duplicate?confirm=1', { method: 'DELETE' });
    expect(deleted.body.historyKept).to.equal(true);
    expect((await list()).map((t) => t.id)).to.deep.equal([original.id]);
    expect((await say({ threadId: original.id, text: "What's my name?" })).text).to.equal('Your name is Ann.');
    // Now alone on its key: deleting it deletes the history.
    expect((await list())[0]!.deletion).to.contain('is deleted, then the thread is removed');
  });
});
