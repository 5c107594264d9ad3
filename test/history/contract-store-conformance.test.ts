import type { ChatMessage, ChatMessageStore, ChatMessageStoreFactory, JsonObject, JsonValue, StoreRestoreContext } from 'skein';
import { runChatMessageStoreConformance } from 'skein/testing';

/** A third-party store built on the contract's required methods only (no `fork`): forks go through the contract default. */
class ContractOnlyStore implements ChatMessageStore {
  readonly type = 'contract-only';
  constructor(private messages: ChatMessage[] = []) {}
  async listMessages(options: { last?: number } = {}): Promise<ChatMessage[]> {
    return options.last === undefined ? [...this.messages] : this.messages.slice(Math.max(0, this.messages.length - options.last));
  }
  async addMessages(messages: readonly ChatMessage[]): Promise<void> {
    this.messages = [...this.messages, ...messages];
  }
  async serialize(): Promise<JsonObject> {
    return { messages: this.messages as unknown as JsonValue[] };
  }
  async clear(): Promise<void> {
    this.messages = [];
  }
}

class ContractOnlyFactory implements ChatMessageStoreFactory {
  readonly type = 'contract-only';
  readonly version = 1;
  create(): ChatMessageStore {
    return new ContractOnlyStore();
  }
  restore(state: JsonObject, context: StoreRestoreContext): ChatMessageStore {
    return new ContractOnlyStore(context.registry.readMessages(state.messages, `${context.path}.messages`));
  }
}

runChatMessageStoreConformance('contract-only third-party store (fork through the contract default)', () => new ContractOnlyFactory(), {
  capabilities: { durable: false },
  longThreadMessages: 2000,
});
