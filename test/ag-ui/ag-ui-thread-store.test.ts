import { expect } from 'chai';
import { type SerializedThread, ThreadConflictError } from 'skein';
import { type AgUiThreadRecord, InMemoryAgUiThreadStore } from 'skein/ag-ui';

const record = (text: string): AgUiThreadRecord & { thread: SerializedThread & { store: { messages: unknown[] }; state: { agUiState: { items: string[] } } } } => ({
  agent: 'helper',
  owner: 'alice',
  thread: {
    $type: 'stored',
    version: 1,
    provider: 'openai-chat',
    store: { type: 'in-memory', version: 1, messages: [{ role: 'user', contents: [{ kind: 'text', text }] }] },
    state: { agUiState: { items: ['a'] } },
  },
});

describe('skein/ag-ui: InMemoryAgUiThreadStore (records kept as objects)', () => {
  it('a loaded record is the saved one, and what a caller changes in it after saving or loading does not change the store', async () => {
    const store = new InMemoryAgUiThreadStore();
    expect(await store.load('t1')).to.equal(undefined);
    const saved = record('hi');
    expect(await store.save('t1', saved, undefined)).to.equal(1);
    // The live thread keeps setting its state keys after the save.
    saved.thread.state.agUiState.items.push('changed after save');

    const loaded = await store.load('t1');
    expect(loaded).to.deep.equal({ ...record('hi'), version: 1 });
    (loaded!.thread.store as { messages: unknown[] }).messages.push({ role: 'user', contents: [] });
    (loaded!.thread.state as { agUiState: { items: string[] } }).agUiState.items.length = 0;
    expect(await store.load('t1')).to.deep.equal({ ...record('hi'), version: 1 });
  });

  it('a save against a version that moved on is a ThreadConflictError and writes nothing', async () => {
    const store = new InMemoryAgUiThreadStore();
    await store.save('t1', record('one'), undefined);
    expect(await store.save('t1', record('two'), 1)).to.equal(2);
    const stale = await store.save('t1', record('three'), 1).catch((e: unknown) => e);
    expect(stale).to.be.instanceOf(ThreadConflictError);
    expect((stale as Error).message).to.contain('expected version 1, found 2');
    const again = await store.save('t2', record('x'), 3).catch((e: unknown) => e);
    expect(again).to.be.instanceOf(ThreadConflictError);
    expect(await store.load('t1')).to.deep.equal({ ...record('two'), version: 2 });
    expect(await store.load('t2')).to.equal(undefined);
  });
});
