import { SerializationError, SkeinError } from '../errors/skein-error.js';
import { CHAT_ROLES, type ChatMessage } from '../messages/chat-message.js';
import type { AgentThread, SerializedThread } from '../threads/agent-thread.js';
import { InMemoryChatMessageStoreFactory } from '../threads/in-memory-chat-message-store.js';
import { CORE_CONTENT_KINDS, type ContentKindSerializer } from './content-kind-serializer.js';
import { ServiceThreadSerializer, StoreThreadSerializer, UnstartedThreadSerializer } from './core-thread-serializers.js';
import { type JsonObject } from './json.js';
import { checkShape, expectObject } from './shape.js';
import type { SerializationRegistry, ThreadReadContext, ThreadSerializer } from './restore-contracts.js';
import { DEFAULT_SERIALIZATION_LIMITS, type SerializationLimits, assertUntrustedJson, describe } from './untrusted-json.js';

export { SerializationRegistry } from './restore-contracts.js';

const ENVELOPE_SPEC = {
  required: { $type: 'string', version: 'number', provider: 'string' },
  optional: { agent: 'string', serviceThreadId: 'string', store: 'object', state: 'object' },
} as const;

const MESSAGE_SPEC = {
  required: { role: 'string', contents: 'array' },
  optional: { authorName: 'string', messageId: 'string', createdAt: 'string', additionalProperties: 'object' },
} as const;

export class SerializationRegistryImpl implements SerializationRegistry {
  readonly limits: SerializationLimits;
  readonly #threads = new Map<string, ThreadSerializer>();
  readonly #contents = new Map<string, ContentKindSerializer>();
  readonly #states = new Map<string, Map<string, readonly number[]>>();

  constructor(limits: Partial<SerializationLimits> = {}) {
    this.limits = { ...DEFAULT_SERIALIZATION_LIMITS, ...limits };
  }

  /** A registry with the core thread types (`service`, `unstarted`, `in-memory`) and content kinds. */
  static withDefaults(limits?: Partial<SerializationLimits>): SerializationRegistryImpl {
    const registry = new SerializationRegistryImpl(limits);
    registry.registerThreadSerializer(new ServiceThreadSerializer());
    registry.registerThreadSerializer(new UnstartedThreadSerializer());
    registry.registerThreadSerializer(new StoreThreadSerializer(new InMemoryChatMessageStoreFactory()));
    for (const kind of CORE_CONTENT_KINDS) registry.registerContentKind(kind);
    return registry;
  }

  registerThreadSerializer(serializer: ThreadSerializer): void {
    const existing = this.#threads.get(serializer.type);
    if (existing && existing !== serializer) {
      throw new SkeinError(`Two thread serializers claim $type "${serializer.type}"; each $type must have exactly one.`);
    }
    this.#threads.set(serializer.type, serializer);
  }

  registerContentKind(serializer: ContentKindSerializer): void {
    const existing = this.#contents.get(serializer.kind);
    if (existing && existing !== serializer) {
      throw new SkeinError(`Two content serializers claim kind "${serializer.kind}"; each kind must have exactly one.`);
    }
    this.#contents.set(serializer.kind, serializer);
  }

  threadTypes(): string[] {
    return [...this.#threads.keys()];
  }

  registerStateType(kind: string, type: string, versions: readonly number[]): void {
    let types = this.#states.get(kind);
    if (!types) this.#states.set(kind, (types = new Map()));
    types.set(type, [...new Set([...(types.get(type) ?? []), ...versions])]);
  }

  checkStateType(kind: string, type: unknown, version: unknown, path: string): void {
    const types = this.#states.get(kind) ?? new Map<string, readonly number[]>();
    if (typeof type !== 'string') throw new SerializationError(`${path}.$type`, `expected a ${kind} type string, found ${describe(type)}.`);
    const versions = types.get(type);
    if (!versions) {
      throw new SerializationError(
        `${path}.$type`,
        `unknown ${kind} type "${type}"; known types: ${[...types.keys()].join(', ') || 'none'}. Load the plugin that writes it into the container.`,
      );
    }
    if (typeof version !== 'number' || !versions.includes(version)) {
      throw new SerializationError(
        `${path}.version`,
        `version ${typeof version === 'number' ? version : describe(version)} of "${type}" is not supported; this build reads version ${versions.join(' or ')}. Upgrade skein (or the plugin that wrote it) to read newer state.`,
      );
    }
  }

  async readThread(input: unknown, context: Omit<ThreadReadContext, 'registry'> = {}): Promise<AgentThread> {
    assertUntrustedJson(input, this.limits);
    const envelope = checkShape(input, '$', ENVELOPE_SPEC) as unknown as SerializedThread;
    const serializer = this.#serializerFor(envelope.$type, context);
    if (!serializer.versions.includes(envelope.version)) {
      throw new SerializationError(
        '$.version',
        `version ${envelope.version} of "${envelope.$type}" threads is not supported; this build reads version ${serializer.versions.join(' or ')}. ` +
          'Upgrade skein (or the plugin that wrote it) to read newer state.',
      );
    }
    return serializer.deserialize(envelope, { ...context, registry: this });
  }

  #serializerFor(type: string, context: Omit<ThreadReadContext, 'registry'>): ThreadSerializer {
    const own = context.messageStoreFactory;
    if (own && own.type === type && !this.#threads.has(type)) return new StoreThreadSerializer(own);
    const serializer = this.#threads.get(type);
    if (serializer) return serializer;
    throw new SerializationError(
      '$.$type',
      `unknown thread type "${type}"; known types: ${this.threadTypes().join(', ')}. ` +
        'Load the plugin that writes this type (e.g. its store plugin) into the container.',
    );
  }

  readMessages(input: unknown, path: string): ChatMessage[] {
    if (!Array.isArray(input)) throw new SerializationError(path, `expected an array of messages, found ${describe(input)}.`);
    const messages = input as unknown[];
    const out = new Array<ChatMessage>(messages.length);
    for (let i = 0; i < messages.length; i++) out[i] = this.#readMessage(messages[i], `${path}[${i}]`);
    return out;
  }

  readMessage(input: unknown, path = '$'): ChatMessage {
    assertUntrustedJson(input, this.limits, path);
    return this.#readMessage(input, path);
  }

  /** Checks one message; returns it as is unless a content serializer built a new object (never mutates input). */
  #readMessage(value: unknown, path: string): ChatMessage {
    const message = checkShape(value, path, MESSAGE_SPEC);
    if (!CHAT_ROLES.includes(message.role as ChatMessage['role'])) {
      throw new SerializationError(`${path}.role`, `expected one of ${CHAT_ROLES.join(', ')}, found ${describe(message.role)}.`);
    }
    const contents = message.contents as unknown[];
    let replaced: unknown[] | undefined;
    for (let i = 0; i < contents.length; i++) {
      const contentPath = `${path}.contents[${i}]`;
      const content = expectObject(contents[i], contentPath);
      const kind = content.kind;
      if (typeof kind !== 'string') throw new SerializationError(`${contentPath}.kind`, `expected a content kind string, found ${describe(kind)}.`);
      const serializer = this.#contents.get(kind);
      if (!serializer) {
        throw new SerializationError(
          `${contentPath}.kind`,
          `unknown content kind "${kind}"; known kinds: ${[...this.#contents.keys()].join(', ')}. Register the plugin that defines it.`,
        );
      }
      const read = serializer.read(content, contentPath);
      if ((read as unknown) !== content) (replaced ??= [...contents])[i] = read;
    }
    return (replaced ? { ...message, contents: replaced } : message) as unknown as ChatMessage;
  }
}

let defaultRegistry: SerializationRegistryImpl | undefined;

/**
 * The registry agents and stores use when none is given (outside a container): the core thread
 * types and content kinds, created once per process.
 */
export function defaultSerializationRegistry(): SerializationRegistry {
  return (defaultRegistry ??= SerializationRegistryImpl.withDefaults());
}

export type { JsonObject };
