import { expect } from 'chai';
import { AgentThread, InMemoryChatMessageStore, ThreadBusyError, ThreadCompatibilityError } from 'skein';

describe('AgentThread', () => {
  it('holds a service id or a message store, never both', () => {
    expect(() => new AgentThread({ origin: { provider: 'p' }, serviceThreadId: 't', messageStore: new InMemoryChatMessageStore() })).to.throw(ThreadCompatibilityError);
    const storeThread = new AgentThread({ origin: { provider: 'p' }, messageStore: new InMemoryChatMessageStore() });
    expect(() => storeThread.setServiceThreadId('conv_1')).to.throw(ThreadCompatibilityError, /conv_1/);
    expect(storeThread.serviceThreadId).to.equal(undefined);
    const serviceThread = new AgentThread({ origin: { provider: 'p' }, serviceThreadId: 't' });
    expect(() => serviceThread.attachMessageStore(new InMemoryChatMessageStore())).to.throw(ThreadCompatibilityError);
    expect(serviceThread.messageStore).to.equal(undefined);
  });

  it('queues a second turn until the first releases the thread', async () => {
    const thread = new AgentThread({ origin: { provider: 'p' } });
    const order: string[] = [];
    const release1 = await thread.acquire();
    const second = thread.acquire().then((release) => {
      order.push('second');
      release();
    });
    await Promise.resolve();
    order.push('first done');
    release1();
    await second;
    expect(order).to.deep.equal(['first done', 'second']);
    expect(thread.busy).to.equal(false);
  });

  it('hands the thread to waiting turns one at a time, in arrival order, and a double release frees nothing twice', async () => {
    const thread = new AgentThread({ origin: { provider: 'p' } });
    const order: string[] = [];
    let holders = 0;
    const release1 = await thread.acquire();
    const turn = (name: string) =>
      thread.acquire().then(async (release) => {
        holders++;
        expect(holders, `${name} ran alongside another turn`).to.equal(1);
        order.push(name);
        await new Promise((resolve) => setTimeout(resolve, 1));
        holders--;
        release();
        release(); // a second call must not free the thread for someone else's turn
      });
    const waiting = [turn('b'), turn('c'), turn('d')];
    expect(thread.busy).to.equal(true);
    release1();
    release1();
    await Promise.all(waiting);
    expect(order).to.deep.equal(['b', 'c', 'd']);
    expect(thread.busy).to.equal(false);
    (await thread.acquire('reject'))();
  });

  it('keeps its origin fixed: threads of one agent share one frozen origin, equal to what they were given', () => {
    const given = { provider: 'p', agent: 'support' };
    const a = new AgentThread({ origin: given });
    const b = new AgentThread({ origin: { provider: 'p', agent: 'support' } });
    given.agent = 'changed';
    expect(a.origin).to.deep.equal({ provider: 'p', agent: 'support' });
    expect(Object.isFrozen(a.origin)).to.equal(true);
    expect(b.origin).to.equal(a.origin);
    expect(new AgentThread({ origin: { provider: 'p' } }).origin).to.deep.equal({ provider: 'p' });
    expect(new AgentThread({ origin: { provider: 'p', agent: 'other' } }).origin).to.deep.equal({ provider: 'p', agent: 'other' });
  });

  it('rejects a second turn with ThreadBusyError under the reject policy', async () => {
    const thread = new AgentThread({ origin: { provider: 'p' } });
    const release = await thread.acquire('reject');
    await thread.acquire('reject').then(
      () => expect.fail('expected ThreadBusyError'),
      (error: unknown) => expect(error).to.be.instanceOf(ThreadBusyError),
    );
    release();
    (await thread.acquire('reject'))();
  });
});

describe('InMemoryChatMessageStore', () => {
  it('lists in order, returns the last N, and clears', async () => {
    const store = new InMemoryChatMessageStore();
    const messages = Array.from({ length: 5 }, (_, i) => ({ role: 'user' as const, contents: [{ kind: 'text' as const, text: `m${i}` }] }));
    await store.addMessages(messages.slice(0, 2));
    await store.addMessages(messages.slice(2));
    expect(await store.listMessages()).to.deep.equal(messages);
    expect(await store.listMessages({ last: 2 })).to.deep.equal(messages.slice(3));
    expect(await store.listMessages({ last: 10 })).to.deep.equal(messages);
    await store.clear();
    expect(await store.listMessages()).to.deep.equal([]);
  });

  it('is not changed by mutating the array listMessages returned', async () => {
    const store = new InMemoryChatMessageStore([{ role: 'user', contents: [] }]);
    (await store.listMessages()).push({ role: 'assistant', contents: [] });
    expect(store.size).to.equal(1);
  });
});
