import { expect } from 'chai';
import fc from 'fast-check';
import OpenAI from 'openai';
import {
  type AIAgent,
  ChatAgent,
  SerializationError,
  SerializationRegistryImpl,
  ThreadCompatibilityError,
} from 'skein';
import { A2AAgent } from 'skein/a2a';
import { AzureAIAgent, createEmulatorAgentsClient } from 'skein/azure-ai-agents';
import { OpenAIAssistantAgent, OpenAIChatClient, OpenAIResponsesClient } from 'skein/openai';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const key = fc.string({ maxLength: 8 }).filter((k) => !FORBIDDEN.has(k));
const json: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
    fc.string({ maxLength: 20 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const jsonObject = fc.dictionary(key, json, { minKeys: 1, maxKeys: 4 }) as fc.Arbitrary<{ [key: string]: Json }>;
const extras = fc.option(jsonObject, { nil: undefined });

function withExtras<T extends object>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.tuple(arb, extras).map(([c, additionalProperties]) => (additionalProperties ? { ...c, additionalProperties } : c));
}
const s = fc.string({ maxLength: 30 });
const contentArb = fc.oneof(
  withExtras(fc.record({ kind: fc.constant('text'), text: s })),
  withExtras(fc.record({ kind: fc.constant('data'), data: fc.base64String({ maxLength: 40 }), mediaType: fc.constantFrom('image/png', 'application/pdf') })),
  withExtras(fc.record({ kind: fc.constant('uri'), uri: fc.webUrl(), mediaType: fc.option(fc.constant('image/jpeg'), { nil: undefined }) }, { requiredKeys: ['kind', 'uri'] })),
  withExtras(fc.record({ kind: fc.constant('function-call'), callId: s, name: s, arguments: fc.json() })),
  withExtras(fc.record({ kind: fc.constant('function-result'), callId: s, result: json, error: s }, { requiredKeys: ['kind', 'callId'] })),
  withExtras(fc.record({ kind: fc.constant('usage'), usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat(), totalTokens: fc.nat() }, { requiredKeys: [] }) })),
  withExtras(fc.record({ kind: fc.constant('error'), message: s, code: s }, { requiredKeys: ['kind', 'message'] })),
  withExtras(fc.record({ kind: fc.constant('reasoning'), text: s })),
  withExtras(fc.record({ kind: fc.constant('function-approval-request'), callId: s, name: s, arguments: fc.json() })),
  withExtras(fc.record({ kind: fc.constant('function-approval-response'), callId: s, approved: fc.boolean(), reason: s }, { requiredKeys: ['kind', 'callId', 'approved'] })),
);
const messageArb = fc.record(
  {
    role: fc.constantFrom('system', 'user', 'assistant', 'tool'),
    contents: fc.array(contentArb, { maxLength: 4 }),
    authorName: s,
    messageId: s,
    createdAt: fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()),
    additionalProperties: jsonObject,
  },
  { requiredKeys: ['role', 'contents'] },
);

/** A valid serialized thread of `provider`, of every thread kind that provider may hold. */
function threadArb(provider: string, agent: string | undefined, kinds: ('in-memory' | 'service' | 'unstarted')[], state: fc.Arbitrary<{ [key: string]: Json } | undefined>) {
  const envelope = { version: fc.constant(1), provider: fc.constant(provider), ...(agent ? { agent: fc.constant(agent) } : {}) };
  const byKind = {
    'in-memory': fc.record({ $type: fc.constant('in-memory'), ...envelope, store: fc.record({ messages: fc.array(messageArb, { maxLength: 6 }) }), state }, { requiredKeys: ['$type', 'version', 'provider', 'store', ...(agent ? ['agent' as const] : [])] }),
    service: fc.record({ $type: fc.constant('service'), ...envelope, serviceThreadId: fc.string({ minLength: 1, maxLength: 20 }), state }, { requiredKeys: ['$type', 'version', 'provider', 'serviceThreadId', ...(agent ? ['agent' as const] : [])] }),
    unstarted: fc.record({ $type: fc.constant('unstarted'), ...envelope, state }, { requiredKeys: ['$type', 'version', 'provider', ...(agent ? ['agent' as const] : [])] }),
  };
  return fc.oneof(...kinds.map((k) => byKind[k])).map((t) => JSON.parse(JSON.stringify(t)) as { [key: string]: Json });
}

/** Canonical JSON, with the empty state a thread omits when it writes itself out. */
function canonical(value: unknown): unknown {
  const plain = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  if (plain.state !== undefined && Object.keys(plain.state as object).length === 0) delete plain.state;
  return plain;
}

const plainState = fc.option(jsonObject.filter((o) => !('a2a' in o) && !('openaiAssistants' in o)), { nil: undefined });

interface Subject {
  name: string;
  agent: AIAgent;
  threads: fc.Arbitrary<{ [key: string]: Json }>;
}

function subjects(): Subject[] {
  const offline = { apiKey: 'unused', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 };
  const chat = new ChatAgent({ chatClient: new OpenAIChatClient({ ...offline, model: 'm' }), name: 'assistant' });
  const responses = new ChatAgent({ chatClient: new OpenAIResponsesClient({ ...offline, model: 'm' }), name: 'assistant' });
  const stateless = new ChatAgent({ chatClient: new OpenAIResponsesClient({ ...offline, model: 'm', store: false }), name: 'assistant' });
  const assistants = new OpenAIAssistantAgent({ client: new OpenAI(offline), definition: { id: 'asst_1', model: 'm' }, name: 'assistant' });
  const foundry = new AzureAIAgent({ client: createEmulatorAgentsClient('http://127.0.0.1:9'), model: 'm', name: 'assistant' });
  const a2a = new A2AAgent({ url: 'http://127.0.0.1:9/.well-known/agent-card.json', name: 'assistant' });
  const assistantsState = fc.option(
    fc.record({ openaiAssistants: fc.record({ executionOptions: fc.record({ maxPromptTokens: fc.integer({ min: 1, max: 1e6 }), parallelToolCalls: fc.boolean() }, { requiredKeys: [] }) }) }),
    { nil: undefined },
  ) as fc.Arbitrary<{ [key: string]: Json } | undefined>;
  const foundryState = fc.option(fc.record({ continuation: fc.record({ agentId: s, runId: s }) }), { nil: undefined }) as fc.Arbitrary<{ [key: string]: Json } | undefined>;
  const a2aState = fc.option(
    fc.record({ a2a: fc.record({ taskId: fc.string({ minLength: 1 }), artifactIds: fc.array(s, { maxLength: 3 }), status: s }, { requiredKeys: ['taskId', 'artifactIds'] }) }),
    { nil: undefined },
  ) as fc.Arbitrary<{ [key: string]: Json } | undefined>;
  return [
    { name: 'openai-chat', agent: chat, threads: threadArb('openai-chat', 'assistant', ['in-memory'], plainState) },
    { name: 'openai-responses', agent: responses, threads: threadArb('openai-responses', 'assistant', ['service', 'unstarted'], plainState) },
    { name: 'openai-responses (store: false)', agent: stateless, threads: threadArb('openai-responses', 'assistant', ['in-memory'], plainState) },
    { name: 'openai-assistants', agent: assistants, threads: threadArb('openai-assistants', 'assistant', ['service', 'unstarted'], assistantsState) },
    { name: 'azure-ai-agents', agent: foundry, threads: threadArb('azure-ai-agents', 'assistant', ['service', 'unstarted'], foundryState) },
    { name: 'a2a', agent: a2a, threads: threadArb('a2a', 'assistant', ['service', 'unstarted'], a2aState) },
  ];
}

// ---- mutations of a valid serialized thread ------------------------------------------------

type Path = (string | number)[];
function paths(value: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...at, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...at, k], out);
  return out;
}
function parentOf(root: unknown, path: Path): [Record<string | number, unknown>, string | number] | undefined {
  if (path.length === 0) return undefined;
  let node = root as Record<string | number, unknown>;
  for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, unknown>;
  return [node, path[path.length - 1]!];
}

class Weird {
  x = 1;
}
const alien = fc.constantFrom<unknown>(undefined, () => 1, Symbol('s'), 10n, new Date(0), new Map(), NaN, Infinity, -Infinity, new Weird(), Object.create(null), [], {}, '', 0, true, null, 'x'.repeat(50));

const mutation = fc.oneof(
  fc.record({ op: fc.constant('drop' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('retype' as const), pick: fc.nat(), to: alien }),
  fc.record({ op: fc.constant('inject' as const), pick: fc.nat(), key: fc.constantFrom('__proto__', 'constructor', 'prototype') }),
  fc.record({ op: fc.constant('extra' as const), pick: fc.nat(), key, to: json }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(valid: { [key: string]: Json }, m: Mutation): unknown {
  if (m.op === 'inject') {
    // Through JSON.parse, as untrusted text would arrive: `__proto__` becomes an own key.
    const all = paths(valid).filter((p) => {
      const v = p.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], valid);
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    });
    const target = all[m.pick % all.length]!;
    const copy = JSON.parse(JSON.stringify(valid)) as { [key: string]: Json };
    const node = target.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], copy) as Record<string, unknown>;
    node['@@inject@@'] = { polluted: true };
    return JSON.parse(JSON.stringify(copy).replace('"@@inject@@"', JSON.stringify(m.key)));
  }
  const copy = JSON.parse(JSON.stringify(valid)) as { [key: string]: Json };
  const all = paths(copy);
  const target = all[m.pick % all.length]!;
  const at = parentOf(copy, target);
  if (m.op === 'drop') {
    if (!at) return undefined;
    const [parent, k] = at;
    if (Array.isArray(parent)) parent.splice(k as number, 1);
    else delete parent[k];
  } else if (m.op === 'retype') {
    if (!at) return m.to;
    at[0][at[1]] = m.to;
  } else {
    const v = target.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], copy);
    if (v && typeof v === 'object' && !Array.isArray(v)) (v as Record<string, unknown>)[m.key] = m.to;
    else if (Array.isArray(v)) v.push(m.to);
  }
  return copy;
}

function assertNoPollution(): void {
  const probe = {} as Record<string, unknown>;
  expect(probe.polluted, 'Object.prototype polluted').to.equal(undefined);
  expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).to.equal(false);
  expect(Object.keys(Object.prototype)).to.deep.equal([]);
}

describe('reliability: untrusted serialized state (property-based)', function () {
  this.timeout(60_000);
  const RUNS = 150;

  for (const subject of subjects()) {
    describe(subject.name, () => {
      it('every valid thread (all content kinds, provider state) round-trips through deserializeThread / serialize', async () => {
        await fc.assert(
          fc.asyncProperty(subject.threads, async (valid) => {
            const thread = await subject.agent.deserializeThread(valid);
            const written = await thread.serialize();
            expect(canonical(written)).to.deep.equal(canonical(valid));
            // And once more, as another process would read what this one wrote.
            const again = await subject.agent.deserializeThread(JSON.parse(JSON.stringify(written)));
            expect(canonical(await again.serialize())).to.deep.equal(canonical(valid));
          }),
          { numRuns: RUNS },
        );
      });

      it('every mutated thread either round-trips or fails with SerializationError (or ThreadCompatibilityError), never polluting prototypes', async () => {
        await fc.assert(
          fc.asyncProperty(subject.threads, mutation, async (valid, m) => {
            const input = mutate(valid, m);
            let thread;
            try {
              thread = await subject.agent.deserializeThread(input);
            } catch (error) {
              if (!(error instanceof SerializationError || error instanceof ThreadCompatibilityError)) throw error;
              assertNoPollution();
              return;
            }
            assertNoPollution();
            // Accepted: it must write itself back as it was read, nothing dropped or invented.
            expect(canonical(await thread.serialize())).to.deep.equal(canonical(input));
          }),
          { numRuns: RUNS * 2 },
        );
      });
    });
  }

  describe('the registry alone (strictly SerializationError)', () => {
    const registry = SerializationRegistryImpl.withDefaults({ maxDepth: 32, maxNodes: 20_000, maxStringLength: 10_000 });

    it('any JSON value, any non-JSON value: reads or throws SerializationError', async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(json, alien, fc.anything()), async (input) => {
          await registry.readThread(input).then(
            (t) => expect(t).to.exist,
            (error: unknown) => expect(error).to.be.instanceOf(SerializationError),
          );
          expect(() => {
            try {
              registry.readMessage(input);
            } catch (error) {
              if (!(error instanceof SerializationError)) throw error;
            }
          }).to.not.throw();
          assertNoPollution();
        }),
        { numRuns: 500 },
      );
    });

    const base = { $type: 'in-memory', version: 1, provider: 'openai-chat' };
    const text = (t: string) => ({ role: 'user', contents: [{ kind: 'text', text: t }] });
    const cases: [string, () => unknown, RegExp][] = [
      [
        'nesting 100 000 deep (no stack overflow)',
        () => {
          let deep: unknown = 1;
          for (let i = 0; i < 100_000; i++) deep = [deep];
          return { ...base, store: { messages: [] }, state: { deep } };
        },
        /maxDepth/,
      ],
      ['an array of 1 000 000 messages (over maxNodes)', () => ({ ...base, store: { messages: new Array(1_000_000).fill(text('hi')) } }), /maxNodes/],
      ['a 5 MB string (over maxStringLength)', () => ({ ...base, store: { messages: [text('x'.repeat(5_000_000))] } }), /maxStringLength/],
      ['a __proto__ key from JSON.parse', () => JSON.parse('{"$type":"in-memory","version":1,"provider":"openai-chat","store":{"messages":[]},"state":{"__proto__":{"polluted":true}}}'), /prototype pollution/],
      ['a constructor.prototype key', () => JSON.parse('{"$type":"in-memory","version":1,"provider":"p","store":{"messages":[{"role":"user","contents":[{"kind":"text","text":"x","constructor":{"prototype":{"polluted":true}}}]}]}}'), /prototype pollution/],
    ];
    for (const [what, make, reason] of cases) {
      it(`${what}: SerializationError naming the limit, nothing polluted`, async () => {
        const error = await registry.readThread(make()).then(
          () => expect.fail('expected a SerializationError'),
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(SerializationError);
        expect((error as Error).message).to.match(reason);
        assertNoPollution();
      });
    }

    it('the limits are configurable: the same input passes a registry with higher limits', async () => {
      const big = { ...base, store: { messages: new Array(30_000).fill(text('hi')) } };
      expect(await registry.readThread(big).catch((e: unknown) => e)).to.be.instanceOf(SerializationError);
      const roomy = SerializationRegistryImpl.withDefaults({ maxNodes: 1_000_000 });
      expect(await (await roomy.readThread(big)).messageStore!.listMessages()).to.have.length(30_000);
    });
  });
});
