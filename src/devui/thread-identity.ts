import { SERVICE_THREAD_TYPE, UNSTARTED_THREAD_TYPE, type SerializedThread } from '../threads/agent-thread.js';

/** The store type whose serialized state is the messages themselves, not a reference to them. */
const IN_MEMORY_STORE_TYPE = 'in-memory';

/**
 * What a serialized thread's history *is*, so two entries that would share it can be told apart
 * from two copies: a service thread's provider and id, or a durable store's type and state (its
 * key). Undefined when the serialized form carries its own messages (in-memory) or no history
 * yet: loading such a file twice gives two independent threads.
 */
export function historyIdentity(serialized: SerializedThread): string | undefined {
  if (serialized.$type === UNSTARTED_THREAD_TYPE || serialized.$type === IN_MEMORY_STORE_TYPE) return undefined;
  if (serialized.$type === SERVICE_THREAD_TYPE) {
    return serialized.serviceThreadId === undefined ? undefined : `service\u0000${serialized.provider}\u0000${serialized.serviceThreadId}`;
  }
  return `store\u0000${serialized.$type}\u0000${JSON.stringify(serialized.store ?? {})}`;
}

/** How the page names a durable store's thread: its `key`, else its state as JSON. */
export function storeKeyOf(serialized: SerializedThread): string | undefined {
  if (historyIdentity(serialized) === undefined || serialized.$type === SERVICE_THREAD_TYPE) return undefined;
  const key = serialized.store?.key;
  return typeof key === 'string' ? key : JSON.stringify(serialized.store ?? {});
}

/**
 * Exactly what deleting an entry deletes, in one sentence, for the confirmation: the title, and
 * the store and its key or the service thread. `sharedWith` are the titles of other entries on
 * the same history (left by an older Dev UI); their history is kept and only the entry goes.
 */
export function describeDeletion(title: string, serialized: SerializedThread, sharedWith: readonly string[] = []): string {
  const name = JSON.stringify(title);
  if (serialized.$type === UNSTARTED_THREAD_TYPE) return `Removes ${name} from the Dev UI; it has no history yet.`;
  if (serialized.$type === IN_MEMORY_STORE_TYPE) {
    return `Deletes ${name} and its messages, which are kept only in the Dev UI's thread file (in-memory store).`;
  }
  const where =
    serialized.$type === SERVICE_THREAD_TYPE
      ? `service thread ${serialized.serviceThreadId ?? '?'} (${serialized.provider})`
      : `its history in the ${serialized.$type} store (key ${storeKeyOf(serialized)})`;
  if (sharedWith.length > 0) {
    const others = sharedWith.map((t) => JSON.stringify(t)).join(', ');
    return `Removes ${name} from the Dev UI only: ${where} is also used by ${others}, so it is kept.`;
  }
  if (serialized.$type === SERVICE_THREAD_TYPE) {
    return `Deletes ${name}: ${where} is kept by the service and will be deleted there too, then removed from the Dev UI.`;
  }
  return `Deletes ${name}: ${where} is deleted, then the thread is removed from the Dev UI.`;
}
