import type { ChatMessage } from '../messages/chat-message.js';
import { packMessage, type StoredMessage, unpackMessage } from './packed-message.js';
import { mapPacked } from '../messages/packed-map.js';
import type { JsonObject, JsonValue } from '../serialization/json.js';
import { SerializationError } from '../errors/skein-error.js';
import type {
  ChatMessageStore,
  ChatMessageStoreFactory,
  ListMessagesOptions,
  StoreRestoreContext,
} from './chat-message-store.js';

const EXACT_UP_TO = 32;

/**
 * Keeps messages in the thread object; they serialize with it. Plain text messages are held
 * packed (see packed-message.ts) and read back as fresh objects; other messages are kept as
 * added (stored messages are never changed).
 */
export class InMemoryChatMessageStore implements ChatMessageStore {
  #messages: StoredMessage[];

  /** A getter, not a field: one slot less in every idle thread's store. */
  get type(): 'in-memory' {
    return 'in-memory';
  }

  constructor(messages: readonly ChatMessage[] = []) {
    this.#messages = mapPacked(messages, packMessage);
  }

  async listMessages(options: ListMessagesOptions = {}): Promise<ChatMessage[]> {
    const from = options.last === undefined ? 0 : Math.max(0, this.#messages.length - options.last);
    return this.#unpacked(from);
  }

  async addMessages(messages: readonly ChatMessage[]): Promise<void> {
    // A short history gets a new array of the exact size: one grown by push keeps up to 16 spare
    // slots, a visible share of a small idle thread. A long one is pushed to: its spare slots
    // are noise next to its messages, and copying it every turn is not.
    const packed = mapPacked(messages, packMessage);
    if (this.#messages.length < EXACT_UP_TO) this.#messages = this.#messages.concat(packed);
    else for (const m of packed) this.#messages.push(m);
  }

  async serialize(): Promise<JsonObject> {
    return { messages: this.#unpacked(0) as unknown as JsonValue[] };
  }

  #unpacked(from: number): ChatMessage[] {
    // slice, then unpack in place: an exact-size, packed-elements array.
    const out = this.#messages.slice(from);
    for (let i = 0; i < out.length; i++) out[i] = unpackMessage(out[i]!);
    return out as ChatMessage[];
  }

  async clear(): Promise<void> {
    this.#messages = [];
  }

  /** A new store holding the first `count` messages; messages are never changed, so they are shared, not copied. */
  async fork(count: number): Promise<InMemoryChatMessageStore> {
    const copy = new InMemoryChatMessageStore();
    copy.#messages = this.#messages.slice(0, Math.max(0, count));
    return copy;
  }

  get size(): number {
    return this.#messages.length;
  }
}

export class InMemoryChatMessageStoreFactory implements ChatMessageStoreFactory {
  readonly type = 'in-memory';
  readonly version = 1;

  create(): ChatMessageStore {
    return new InMemoryChatMessageStore();
  }

  restore(state: JsonObject, context: StoreRestoreContext): ChatMessageStore {
    const extra = Object.keys(state).filter((k) => k !== 'messages');
    if (extra.length > 0) {
      throw new SerializationError(`${context.path}.${extra[0]}`, `unexpected field; an in-memory store holds only "messages".`);
    }
    return new InMemoryChatMessageStore(context.registry.readMessages(state.messages, `${context.path}.messages`));
  }
}
