import { expect } from 'chai';
import {
  AgentThread,
  InMemoryChatMessageStore,
  SerializationError,
  SerializationRegistryImpl,
  ShapeContentKindSerializer,
  type ChatMessage,
  type SerializedThread,
} from 'skein';

async function serializedInMemoryThread(): Promise<SerializedThread> {
  const store = new InMemoryChatMessageStore([
    { role: 'user', contents: [{ kind: 'text', text: 'hi' }] },
    { role: 'assistant', contents: [{ kind: 'function-call', callId: 'c1', name: 'f', arguments: '{}' }] },
    { role: 'tool', contents: [{ kind: 'function-result', callId: 'c1', result: { ok: true } }] },
  ]);
  const thread = new AgentThread({ origin: { provider: 'p', agent: 'a' }, messageStore: store });
  return JSON.parse(JSON.stringify(await thread.serialize())) as SerializedThread;
}

async function expectSerializationError(promise: Promise<unknown>, path: string | RegExp): Promise<SerializationError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(SerializationError);
    const e = error as SerializationError;
    if (typeof path === 'string') expect(e.path).to.equal(path);
    else expect(e.path).to.match(path);
    return e;
  }
  throw new Error('expected a SerializationError');
}

describe('SerializationRegistry', () => {
  const registry = SerializationRegistryImpl.withDefaults();

  it('round-trips an in-memory thread with every message intact', async () => {
    const serialized = await serializedInMemoryThread();
    const thread = await registry.readThread(serialized);
    expect(thread.origin).to.deep.equal({ provider: 'p', agent: 'a' });
    const messages = await thread.messageStore!.listMessages();
    expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool']);
    expect(JSON.parse(JSON.stringify(await thread.serialize()))).to.deep.equal(serialized);
  });

  it('round-trips a service thread, keeping only its id', async () => {
    const thread = new AgentThread({ origin: { provider: 'svc' }, serviceThreadId: 'thread_123' });
    const serialized = await thread.serialize();
    expect(serialized).to.deep.equal({ $type: 'service', version: 1, provider: 'svc', serviceThreadId: 'thread_123' });
    const back = await registry.readThread(JSON.parse(JSON.stringify(serialized)));
    expect(back.serviceThreadId).to.equal('thread_123');
    expect(back.messageStore).to.equal(undefined);
  });

  it('rejects an unknown $type, naming what it found and what it knows', async () => {
    const e = await expectSerializationError(registry.readThread({ $type: 'mystery', version: 1, provider: 'p' }), '$.$type');
    expect(e.message).to.contain('"mystery"').and.to.contain('in-memory');
  });

  it('rejects an unknown version', async () => {
    const serialized = { ...(await serializedInMemoryThread()), version: 2 };
    const e = await expectSerializationError(registry.readThread(serialized), '$.version');
    expect(e.message).to.contain('version 2');
  });

  for (const [label, input] of [
    ['null', null],
    ['a string', 'thread'],
    ['a number', 42],
    ['an array', []],
    ['a Date', new Date()],
  ] as const) {
    it(`rejects ${label} as a thread`, async () => {
      await expectSerializationError(registry.readThread(input), '$');
    });
  }

  it('rejects wrong shapes with the path of the bad field', async () => {
    const base = await serializedInMemoryThread();
    const messages = (base.store as unknown as { messages: ChatMessage[] }).messages;
    const cases: [unknown, string][] = [
      [{ ...base, provider: 7 }, '$.provider'],
      [{ ...base, extra: true }, '$.extra'],
      [{ ...base, store: { messages: 'no' } }, '$.store.messages'],
      [{ ...base, store: { messages: [{ ...messages[0], role: 'robot' }] } }, '$.store.messages[0].role'],
      [{ ...base, store: { messages: [{ role: 'user', contents: [{ kind: 'hologram' }] }] } }, '$.store.messages[0].contents[0].kind'],
      [{ ...base, store: { messages: [{ role: 'user', contents: [{ kind: 'text', text: 5 }] }] } }, '$.store.messages[0].contents[0].text'],
      [{ ...base, store: { messages: [{ role: 'user', contents: [{ kind: 'function-call', callId: 'x', name: 'f' }] }] } }, '$.store.messages[0].contents[0].arguments'],
      [{ ...base, store: { messages: [], cache: 1 } }, '$.store.cache'],
      [{ $type: 'service', version: 1, provider: 'p' }, '$.serviceThreadId'],
      [{ $type: 'service', version: 1, provider: 'p', serviceThreadId: 'x', store: {} }, '$.store'],
    ];
    for (const [input, path] of cases) await expectSerializationError(registry.readThread(input), path);
  });

  it('rejects __proto__, constructor and prototype keys anywhere, without polluting Object.prototype', async () => {
    const base = await serializedInMemoryThread();
    const payloads = [
      `{"$type":"in-memory","version":1,"provider":"p","__proto__":{"polluted":true},"store":{"messages":[]}}`,
      JSON.stringify(base).replace('"kind":"text"', '"kind":"text","constructor":{"prototype":{"polluted":true}}'),
      JSON.stringify({ ...base, state: { nested: { prototype: { polluted: true } } } }),
    ];
    for (const json of payloads) {
      const e = await expectSerializationError(registry.readThread(JSON.parse(json)), /(__proto__|constructor|prototype)$/);
      expect(e.message).to.contain('not allowed');
    }
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(Object.prototype).to.not.have.property('polluted');
  });

  it('rejects deeply nested input without overflowing the stack', async () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const e = await expectSerializationError(
      registry.readThread({ $type: 'unstarted', version: 1, provider: 'p', state: deep as Record<string, never> }),
      /^\$\.state(\.a)+$/,
    );
    expect(e.message).to.contain('maxDepth');
  });

  it('rejects oversized input per the configured limits', async () => {
    const small = SerializationRegistryImpl.withDefaults({ maxNodes: 100, maxStringLength: 1000 });
    const many = { $type: 'in-memory', version: 1, provider: 'p', store: { messages: Array.from({ length: 50 }, () => ({ role: 'user', contents: [] })) } };
    expect((await expectSerializationError(small.readThread(many), '$')).message).to.contain('maxNodes');
    const long = { $type: 'unstarted', version: 1, provider: 'p', state: { note: 'x'.repeat(1001) } };
    expect((await expectSerializationError(small.readThread(long), '$.state.note')).message).to.contain('maxStringLength');
  });

  it('does not modify its input when it rejects it', async () => {
    const base = await serializedInMemoryThread();
    const input = { ...base, store: { messages: [...(base.store as unknown as { messages: unknown[] }).messages, { role: 'robot', contents: [] }] } };
    const before = JSON.stringify(input);
    await expectSerializationError(registry.readThread(input), '$.store.messages[3].role');
    expect(JSON.stringify(input)).to.equal(before);
  });

  it('reads a content kind a plugin registers, and only once registered', async () => {
    const custom = SerializationRegistryImpl.withDefaults();
    const message = { role: 'user', contents: [{ kind: 'x-sticker', stickerId: 'cat' }] };
    expect(() => custom.readMessage(message)).to.throw(SerializationError, /unknown content kind "x-sticker"/);
    custom.registerContentKind(new ShapeContentKindSerializer('x-sticker', { required: { stickerId: 'string' } }));
    expect(custom.readMessage(message).contents[0]).to.deep.equal({ kind: 'x-sticker', stickerId: 'cat' });
    expect(() => custom.readMessage({ role: 'user', contents: [{ kind: 'x-sticker', stickerId: 1 }] })).to.throw(SerializationError, /stickerId/);
  });

  it('refuses two serializers for one $type', () => {
    const custom = SerializationRegistryImpl.withDefaults();
    expect(() => custom.registerContentKind(new ShapeContentKindSerializer('text', {}))).to.throw(/Two content serializers claim kind "text"/);
  });
});
