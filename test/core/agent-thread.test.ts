import { expect } from 'chai';
import fc from 'fast-check';
import { AgentThread, type ChatMessage, InMemoryChatMessageStore, ThreadBusyError, ThreadCompatibilityError } from 'skein';

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

  // Plain text messages are held in a compact form: what comes back must be what went in,
  // field for field and in the same key order (so serialized JSON is byte for byte the same).
  const variants: [string, ChatMessage][] = [
    ['a user text with createdAt', { role: 'user', contents: [{ kind: 'text', text: 'hi' }], createdAt: '2026-11-30T10:00:00.000Z' }],
    ['an agent reply with messageId and authorName', { role: 'assistant', contents: [{ kind: 'text', text: 'hello' }], messageId: 'chatcmpl-1', authorName: 'support' }],
    ['fields in another order', { role: 'assistant', contents: [{ kind: 'text', text: 'x' }], authorName: 'a', createdAt: '2026-11-30T10:00:00.000Z' }],
    ['contents before role', { contents: [{ kind: 'text', text: 'x' }], role: 'user' }],
    ['additionalProperties', { role: 'assistant', contents: [{ kind: 'text', text: 'x' }], additionalProperties: { partial: true } }],
    ['two contents', { role: 'user', contents: [{ kind: 'text', text: 'a' }, { kind: 'text', text: 'b' }] }],
    ['no contents', { role: 'assistant', contents: [] }],
    ['a text content with more fields', { role: 'user', contents: [{ kind: 'text', text: 'a', additionalProperties: { lang: 'en' } } as ChatMessage['contents'][number]] }],
    ['a function result', { role: 'tool', contents: [{ kind: 'function-result', callId: 'c1', result: { ok: true } }] }],
    ['a system message', { role: 'system', contents: [{ kind: 'text', text: 'Be brief.' }] }],
    ['an empty text', { role: 'user', contents: [{ kind: 'text', text: '' }], messageId: '' }],
  ];
  for (const [what, message] of variants) {
    it(`gives back ${what} exactly as it was added (list, last, serialize)`, async () => {
      const store = new InMemoryChatMessageStore();
      await store.addMessages([message]);
      const [listed] = await store.listMessages();
      expect(listed).to.deep.equal(message);
      expect(JSON.stringify(listed)).to.equal(JSON.stringify(message));
      expect(JSON.stringify(await store.listMessages({ last: 1 }))).to.equal(JSON.stringify([message]));
      expect(JSON.stringify(await store.serialize())).to.equal(JSON.stringify({ messages: [message] }));
      expect(JSON.stringify(await new InMemoryChatMessageStore([message]).listMessages())).to.equal(JSON.stringify([message]));
    });
  }

  it('round-trips any text message byte for byte (generated)', async () => {
    const text = fc.string({ maxLength: 20 });
    const message = fc.record(
      {
        role: fc.constantFrom('user', 'assistant', 'system', 'tool'),
        contents: fc.array(fc.record({ kind: fc.constant('text'), text }), { maxLength: 2 }),
        createdAt: text,
        messageId: text,
        authorName: text,
      },
      { requiredKeys: ['role', 'contents'] },
    ) as fc.Arbitrary<ChatMessage>;
    await fc.assert(
      fc.asyncProperty(fc.array(message, { maxLength: 6 }), async (messages) => {
        const store = new InMemoryChatMessageStore();
        await store.addMessages(messages);
        expect(JSON.stringify(await store.listMessages())).to.equal(JSON.stringify(messages));
        expect(await store.listMessages()).to.deep.equal(messages);
      }),
    );
  });

  it('reads a text message back as a fresh object: changing it changes neither the store nor the caller\'s original', async () => {
    const added: ChatMessage = { role: 'user', contents: [{ kind: 'text', text: 'original' }] };
    const store = new InMemoryChatMessageStore();
    await store.addMessages([added]);
    const [listed] = await store.listMessages();
    listed!.contents.push({ kind: 'text', text: 'extra' });
    (listed!.contents[0] as { text: string }).text = 'changed';
    expect(await store.listMessages()).to.deep.equal([{ role: 'user', contents: [{ kind: 'text', text: 'original' }] }]);
    expect(added.contents).to.have.length(1);
  });
});
