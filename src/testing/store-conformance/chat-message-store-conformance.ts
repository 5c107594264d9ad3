import assert from 'node:assert/strict';
import { SerializationError, ThreadConflictError } from '../../errors/skein-error.js';
import type { ChatMessage } from '../../messages/chat-message.js';
import { SerializationRegistryImpl } from '../../serialization/serialization-registry.js';
import type { JsonObject } from '../../serialization/json.js';
import type { ChatMessageStore, ChatMessageStoreFactory, StoreRestoreContext } from '../../threads/chat-message-store.js';
import { forkMessageStore } from '../../threads/thread-history.js';

/** What the suite may ask `makeFactory` for; a store without retention ignores it (and says so in `capabilities`). */
export interface StoreConformanceFactoryOptions {
  maxMessages?: number;
  ttlSeconds?: number;
}

export interface StoreConformanceCapabilities {
  /**
   * The store keeps history outside the thread object: `serialize()` holds a key, a new factory
   * reconnects to the same history, and two instances restored from one state see each other's
   * appends. Default true; false for the in-memory store.
   */
  durable?: boolean;
  /** Appends are guarded by the version the instance last saw (ThreadConflictError). Default: same as `durable`. */
  conflicts?: boolean;
  /** `makeFactory({ maxMessages })` keeps only the newest messages. Default false. */
  maxMessages?: boolean;
  /** `makeFactory({ ttlSeconds })` expires threads; `expire(factory)` makes the TTL elapse. Default false. */
  ttl?: boolean;
}

export interface StoreConformanceOptions<F extends ChatMessageStoreFactory = ChatMessageStoreFactory> {
  capabilities?: StoreConformanceCapabilities;
  /** Makes the TTL of every thread written so far elapse (e.g. `factory.prune(future)`); required with `ttl`. */
  expire?: (factory: F) => Promise<void>;
  /** Releases a factory's connections; by default its `close()` is called when it has one. */
  dispose?: (factory: F) => Promise<void> | void;
  /** Messages in the long-thread test. Default 10,000. */
  longThreadMessages?: number;
  /** Mocha timeout for each test, in ms. Default 60,000. */
  timeout?: number;
}

const registry = SerializationRegistryImpl.withDefaults();

function restoreContext(factory: ChatMessageStoreFactory): StoreRestoreContext {
  return { path: '$.store', version: factory.version, registry };
}

function user(text: string): ChatMessage {
  return { role: 'user', contents: [{ kind: 'text', text }] };
}

function assistant(text: string): ChatMessage {
  return { role: 'assistant', contents: [{ kind: 'text', text }], authorName: 'bot' };
}

function turn(n: number): ChatMessage[] {
  return [user(`question ${n}`), assistant(`answer ${n}`)];
}

function texts(messages: readonly ChatMessage[]): string[] {
  return messages.map((m) => m.contents.map((c) => (c.kind === 'text' ? c.text : `[${c.kind}]`)).join(''));
}

/** JSON round trip: what a durable store gives back for what it was given. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * The ChatMessageStore conformance suite: defines mocha `describe`/`it` blocks proving a store
 * factory keeps the contract (ordering, atomic turns, version conflicts, serialize/reconnect,
 * clear, retention, large and unicode messages, long threads, `last: N`). Call it at the top
 * level of a mocha test file:
 *
 * ```ts
 * runChatMessageStoreConformance('my store', (opts) => new MyStoreFactory({ ...opts }));
 * ```
 */
export function runChatMessageStoreConformance<F extends ChatMessageStoreFactory>(
  name: string,
  makeFactory: (options: StoreConformanceFactoryOptions) => Promise<F> | F,
  options: StoreConformanceOptions<F> = {},
): void {
  const durable = options.capabilities?.durable ?? true;
  const conflicts = options.capabilities?.conflicts ?? durable;
  const longThread = options.longThreadMessages ?? 10_000;

  describe(`ChatMessageStore conformance: ${name}`, function () {
    this.timeout(options.timeout ?? 60_000);
    const made: F[] = [];

    async function factory(factoryOptions: StoreConformanceFactoryOptions = {}): Promise<F> {
      const f = await makeFactory(factoryOptions);
      made.push(f);
      return f;
    }

    async function restore(f: F, state: JsonObject): Promise<ChatMessageStore> {
      return f.restore(plain(state), restoreContext(f));
    }

    afterEach(async () => {
      for (const f of made.splice(0)) {
        if (options.dispose) await options.dispose(f);
        else await (f as { close?: () => unknown }).close?.();
      }
    });

    describe('ordering and reading', () => {
      it('starts a new thread empty', async () => {
        const store = (await factory()).create({ provider: 'test' });
        assert.deepEqual(await store.listMessages(), []);
        assert.deepEqual(await store.listMessages({ last: 5 }), []);
      });

      it('returns every message in the order the turns were appended', async () => {
        const store = (await factory()).create({ provider: 'test' });
        for (let i = 1; i <= 3; i++) await store.addMessages(turn(i));
        assert.deepEqual(texts(await store.listMessages()), ['question 1', 'answer 1', 'question 2', 'answer 2', 'question 3', 'answer 3']);
      });

      it('keeps every field of a message, tool calls and results included', async () => {
        const store = (await factory()).create({ provider: 'test', agent: 'a' });
        const messages: ChatMessage[] = [
          { role: 'system', contents: [{ kind: 'text', text: 'be brief' }] },
          { role: 'user', contents: [{ kind: 'text', text: 'weather?' }], authorName: 'ann', messageId: 'm1', createdAt: '2026-01-01T00:00:00.000Z' },
          { role: 'assistant', contents: [{ kind: 'function-call', callId: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
          { role: 'tool', contents: [{ kind: 'function-result', callId: 'c1', result: { temp: -3, sky: ['snow', null] } }] },
          {
            role: 'assistant',
            contents: [{ kind: 'text', text: 'Cold.', additionalProperties: { itemId: 'x' } }, { kind: 'usage', usage: { inputTokens: 3, outputTokens: 1 } }],
            additionalProperties: { finishReason: 'stop' },
          },
        ];
        await store.addMessages(messages);
        assert.deepEqual(await store.listMessages(), plain(messages));
      });

      it('reads only the last N messages, in order', async () => {
        const store = (await factory()).create({ provider: 'test' });
        for (let i = 1; i <= 5; i++) await store.addMessages(turn(i));
        assert.deepEqual(texts(await store.listMessages({ last: 3 })), ['answer 4', 'question 5', 'answer 5']);
        assert.deepEqual(await store.listMessages({ last: 0 }), []);
        assert.equal((await store.listMessages({ last: 100 })).length, 10);
      });

      it('treats an empty append as a no-op', async () => {
        const store = (await factory()).create({ provider: 'test' });
        await store.addMessages(turn(1));
        await store.addMessages([]);
        assert.deepEqual(texts(await store.listMessages()), ['question 1', 'answer 1']);
      });
    });

    describe('content', () => {
      it('keeps a 1 MB message intact', async () => {
        const store = (await factory()).create({ provider: 'test' });
        const big = 'x'.repeat(512 * 1024) + 'é'.repeat(256 * 1024) + 'end';
        await store.addMessages([user(big), assistant('ok')]);
        const [first, second] = await store.listMessages();
        assert.equal(texts([first!])[0], big);
        assert.equal(texts([second!])[0], 'ok');
      });

      it('keeps unicode exactly: emoji, CJK, RTL, combining marks, NUL and lone surrogates', async () => {
        const store = (await factory()).create({ provider: 'test' });
        const samples = ['👩‍👩‍👧‍👦 🏳️‍🌈', '日本語のテキスト', 'مرحبا بالعالم', 'e\u0301 n\u0303', 'nul:\u0000:end', 'lone \ud800 surrogate', "quote ' \" \\ $1 %s"];
        await store.addMessages(samples.map(user));
        assert.deepEqual(texts(await store.listMessages()), samples);
      });
    });

    describe(`long threads (${longThread} messages)`, () => {
      it('appends and reads them all in order, and the last 20 alone', async () => {
        const store = (await factory()).create({ provider: 'test' });
        const perTurn = 100;
        for (let t = 0; t < longThread / perTurn; t++) {
          await store.addMessages(Array.from({ length: perTurn }, (_, i) => user(`m${t * perTurn + i}`)));
        }
        const all = await store.listMessages();
        assert.equal(all.length, longThread);
        const all_texts = texts(all);
        for (let i = 0; i < longThread; i++) if (all_texts[i] !== `m${i}`) assert.fail(`message ${i} is "${all_texts[i]}"`);
        assert.deepEqual(texts(await store.listMessages({ last: 20 })), Array.from({ length: 20 }, (_, i) => `m${longThread - 20 + i}`));
      });
    });

    describe('clear', () => {
      it('removes every message of the thread and the thread stays usable', async () => {
        const store = (await factory()).create({ provider: 'test' });
        await store.addMessages(turn(1));
        await store.clear();
        assert.deepEqual(await store.listMessages(), []);
        await store.addMessages(turn(2));
        assert.deepEqual(texts(await store.listMessages()), ['question 2', 'answer 2']);
      });

      it('does not touch other threads', async () => {
        const f = await factory();
        const a = f.create({ provider: 'test' });
        const b = f.create({ provider: 'test' });
        await a.addMessages(turn(1));
        await b.addMessages(turn(2));
        await a.clear();
        assert.deepEqual(texts(await b.listMessages()), ['question 2', 'answer 2']);
      });
    });

    describe('serialization', () => {
      it('rejects malformed state with a SerializationError naming the path', async () => {
        const f = await factory();
        await assert.rejects(
          async () => f.restore({ bogus: 1 }, restoreContext(f)),
          (error: unknown) => error instanceof SerializationError && error.path.startsWith('$.store'),
        );
      });

      it('restores the same history from serialized state', async () => {
        const f = await factory();
        const store = f.create({ provider: 'test' });
        await store.addMessages(turn(1));
        const again = await restore(f, await store.serialize());
        assert.deepEqual(texts(await again.listMessages()), ['question 1', 'answer 1']);
      });

      if (durable) {
        it('serializes the key, never the messages', async () => {
          const store = (await factory()).create({ provider: 'test' });
          await store.addMessages([user('secret-history-marker'), assistant('another-marker')]);
          const json = JSON.stringify(await store.serialize());
          assert.ok(!json.includes('secret-history-marker') && !json.includes('another-marker'), `serialized state holds messages: ${json}`);
          assert.ok(json.length < 1024, `serialized state is ${json.length} characters`);
        });

        it('reconnects through a new factory (a new process) and both see each other’s turns', async () => {
          const first = (await factory()).create({ provider: 'test' });
          await first.addMessages(turn(1));
          const state = await first.serialize();
          const second = await restore(await factory(), state);
          assert.deepEqual(texts(await second.listMessages()), ['question 1', 'answer 1']);
          await second.addMessages(turn(2));
          assert.deepEqual(texts(await first.listMessages()), ['question 1', 'answer 1', 'question 2', 'answer 2']);
        });

        it('writes nothing of a turn that cannot be stored', async () => {
          const store = (await factory()).create({ provider: 'test' });
          await store.addMessages(turn(1));
          const bad = { role: 'assistant', contents: [{ kind: 'text', text: 'n' }], additionalProperties: { n: 1n } } as unknown as ChatMessage;
          await assert.rejects(store.addMessages([user('q2'), bad]));
          assert.deepEqual(texts(await store.listMessages()), ['question 1', 'answer 1']);
          await store.addMessages(turn(2));
          assert.deepEqual(texts(await store.listMessages()), ['question 1', 'answer 1', 'question 2', 'answer 2']);
        });
      }
    });

    if (conflicts) {
      describe('version conflicts (two app instances on one thread)', () => {
        it('rejects the second of two appends made from the same version, writing nothing of it', async () => {
          const f = await factory();
          const origin = f.create({ provider: 'test' });
          await origin.addMessages(turn(1));
          const state = await origin.serialize();
          const a = await restore(f, state);
          const b = await restore(await factory(), state);
          await a.listMessages();
          await b.listMessages();
          await a.addMessages(turn(2));
          await assert.rejects(b.addMessages([user('lost?'), assistant('no')]), ThreadConflictError);
          assert.deepEqual(texts(await origin.listMessages()), ['question 1', 'answer 1', 'question 2', 'answer 2']);
          // The documented policy: reload, then run the turn again.
          await b.listMessages();
          await b.addMessages(turn(3));
          assert.deepEqual(texts(await a.listMessages()), ['question 1', 'answer 1', 'question 2', 'answer 2', 'question 3', 'answer 3']);
        });

        it('lets exactly one of two simultaneous appends win; the turns never interleave', async () => {
          const f = await factory();
          const origin = f.create({ provider: 'test' });
          const state = await origin.serialize();
          const a = await restore(f, state);
          const b = await restore(await factory(), state);
          const results = await Promise.allSettled([
            a.addMessages([user('a1'), assistant('a2'), assistant('a3')]),
            b.addMessages([user('b1'), assistant('b2'), assistant('b3')]),
          ]);
          const won = results.filter((r) => r.status === 'fulfilled');
          const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
          assert.equal(won.length, 1);
          assert.ok(lost[0]!.reason instanceof ThreadConflictError, `expected ThreadConflictError, got ${String(lost[0]!.reason)}`);
          const stored = texts(await origin.listMessages());
          assert.ok(
            JSON.stringify(stored) === JSON.stringify(['a1', 'a2', 'a3']) || JSON.stringify(stored) === JSON.stringify(['b1', 'b2', 'b3']),
            `stored ${JSON.stringify(stored)}`,
          );
        });

        it('notices an append made after this instance last read', async () => {
          const f = await factory();
          const a = f.create({ provider: 'test' });
          await a.addMessages(turn(1));
          const b = await restore(f, await a.serialize());
          await b.addMessages(turn(2));
          await assert.rejects(a.addMessages(turn(3)), ThreadConflictError);
          assert.equal((await a.listMessages()).length, 4);
          await a.addMessages(turn(3));
          assert.equal((await b.listMessages()).length, 6);
        });
      });
    }

    describe('fork (agent.forkThread on this store)', () => {
      // The store's own fork when it has one, else the contract default the agent uses.
      async function fork(f: F, store: ChatMessageStore, count: number): Promise<ChatMessageStore> {
        return forkMessageStore(store, await store.listMessages(), count, f, { provider: 'test' });
      }

      it('copies the first N messages to a new, independent thread; the original is unchanged', async () => {
        const f = await factory();
        const store = f.create({ provider: 'test' });
        for (let i = 1; i <= 3; i++) await store.addMessages(turn(i));
        const original = plain(await store.listMessages());
        const forked = await fork(f, store, 4);
        assert.deepEqual(plain(await forked.listMessages()), original.slice(0, 4));
        assert.deepEqual(plain(await store.listMessages()), original);
        if (durable) assert.notDeepEqual(await forked.serialize(), await store.serialize(), 'a fork has its own key');
        await forked.addMessages(turn(9));
        await store.addMessages(turn(4));
        assert.deepEqual(texts(await forked.listMessages()), ['question 1', 'answer 1', 'question 2', 'answer 2', 'question 9', 'answer 9']);
        assert.deepEqual(texts(await store.listMessages()).slice(-2), ['question 4', 'answer 4']);
        assert.equal((await store.listMessages()).length, 8);
      });

      it('forks everything, nothing (an empty thread that still takes appends), and forks of forks', async () => {
        const f = await factory();
        const store = f.create({ provider: 'test' });
        for (let i = 1; i <= 2; i++) await store.addMessages(turn(i));
        const all = await fork(f, store, 4);
        assert.deepEqual(texts(await all.listMessages()), texts(await store.listMessages()));
        const none = await fork(f, store, 0);
        assert.deepEqual(await none.listMessages(), []);
        await none.addMessages(turn(5));
        assert.deepEqual(texts(await none.listMessages()), ['question 5', 'answer 5']);
        const forkOfFork = await fork(f, all, 3);
        assert.deepEqual(texts(await forkOfFork.listMessages()), ['question 1', 'answer 1', 'question 2']);
        await forkOfFork.addMessages([assistant('answer 2b')]);
        assert.deepEqual(texts(await all.listMessages()), ['question 1', 'answer 1', 'question 2', 'answer 2']);
      });

      it('keeps every field of the copied messages', async () => {
        const f = await factory();
        const store = f.create({ provider: 'test' });
        const rich: ChatMessage[] = [
          { role: 'user', contents: [{ kind: 'text', text: 'weather? 🌧️' }], authorName: 'ann', messageId: 'm1', createdAt: '2026-01-01T00:00:00.000Z' },
          { role: 'assistant', contents: [{ kind: 'function-call', callId: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }], additionalProperties: { x: [1, null] } },
          { role: 'tool', contents: [{ kind: 'function-result', callId: 'c1', result: { temp: -3 } }] },
        ];
        await store.addMessages(rich);
        const forked = await fork(f, store, 3);
        assert.deepEqual(plain(await forked.listMessages()), plain(rich));
      });

      it('clearing a fork leaves its origin intact', async () => {
        const f = await factory();
        const store = f.create({ provider: 'test' });
        await store.addMessages(turn(1));
        const forked = await fork(f, store, 2);
        await forked.clear();
        assert.deepEqual(await forked.listMessages(), []);
        assert.deepEqual(texts(await store.listMessages()), ['question 1', 'answer 1']);
      });

      if (durable) {
        it('a fork reconnects through a new factory (a new process) and goes on there', async () => {
          const f = await factory();
          const store = f.create({ provider: 'test' });
          for (let i = 1; i <= 2; i++) await store.addMessages(turn(i));
          const state = await (await fork(f, store, 2)).serialize();
          const g = await factory();
          const reopened = await restore(g, state);
          assert.deepEqual(texts(await reopened.listMessages()), ['question 1', 'answer 1']);
          await reopened.addMessages(turn(7));
          assert.deepEqual(texts(await (await restore(f, state)).listMessages()), ['question 1', 'answer 1', 'question 7', 'answer 7']);
          assert.equal((await store.listMessages()).length, 4);
        });
      }
    });

    if (options.capabilities?.maxMessages) {
      describe('retention: maxMessages', () => {
        it('keeps only the newest messages, in order', async () => {
          const store = (await factory({ maxMessages: 4 })).create({ provider: 'test' });
          for (let i = 1; i <= 4; i++) await store.addMessages(turn(i));
          assert.deepEqual(texts(await store.listMessages()), ['question 3', 'answer 3', 'question 4', 'answer 4']);
          assert.deepEqual(texts(await store.listMessages({ last: 1 })), ['answer 4']);
        });
      });
    }

    if (options.capabilities?.ttl) {
      describe('retention: ttlSeconds', () => {
        it('drops a thread whose TTL elapsed, leaving a fresh one intact', async () => {
          if (!options.expire) assert.fail('the ttl capability needs options.expire');
          const f = await factory({ ttlSeconds: 1 });
          const old = f.create({ provider: 'test' });
          await old.addMessages(turn(1));
          await options.expire(f);
          const fresh = f.create({ provider: 'test' });
          await fresh.addMessages(turn(2));
          const reopened = await restore(f, await old.serialize());
          assert.deepEqual(await reopened.listMessages(), []);
          assert.deepEqual(texts(await fresh.listMessages()), ['question 2', 'answer 2']);
        });
      });
    }
  });
}
