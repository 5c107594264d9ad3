import { SerializationError } from '../errors/skein-error.js';
import {
  AgentThread,
  SERVICE_THREAD_TYPE,
  type SerializedThread,
  UNSTARTED_THREAD_TYPE,
} from '../threads/agent-thread.js';
import type { ChatMessageStoreFactory } from '../threads/chat-message-store.js';
import type { ThreadReadContext, ThreadSerializer } from './thread-serializer.js';

function originOf(serialized: SerializedThread) {
  return { provider: serialized.provider, agent: serialized.agent };
}

function rejectField(serialized: SerializedThread, field: 'store' | 'serviceThreadId', why: string): void {
  if (serialized[field] !== undefined) throw new SerializationError(`$.${field}`, why);
}

/** A thread whose history the service keeps: only its id is serialized. */
export class ServiceThreadSerializer implements ThreadSerializer {
  readonly type = SERVICE_THREAD_TYPE;
  readonly versions = [1];
  deserialize(serialized: SerializedThread): AgentThread {
    if (typeof serialized.serviceThreadId !== 'string' || serialized.serviceThreadId === '') {
      throw new SerializationError('$.serviceThreadId', 'a service thread needs a non-empty string serviceThreadId.');
    }
    rejectField(serialized, 'store', 'a service thread has no message store.');
    return new AgentThread({ origin: originOf(serialized), serviceThreadId: serialized.serviceThreadId, state: serialized.state });
  }
}

/** A thread that has not run yet on a client that decides its kind on the first run. */
export class UnstartedThreadSerializer implements ThreadSerializer {
  readonly type = UNSTARTED_THREAD_TYPE;
  readonly versions = [1];
  deserialize(serialized: SerializedThread): AgentThread {
    rejectField(serialized, 'store', 'an unstarted thread has no message store.');
    rejectField(serialized, 'serviceThreadId', 'an unstarted thread has no service thread id.');
    return new AgentThread({ origin: originOf(serialized), state: serialized.state });
  }
}

/**
 * A thread whose history is in a message store of one type: the store's factory reconnects it
 * from the store's own state. Store plugins contribute one of these for their factory.
 */
export class StoreThreadSerializer implements ThreadSerializer {
  readonly type: string;
  readonly versions: readonly number[];
  constructor(private readonly factory: ChatMessageStoreFactory) {
    this.type = factory.type;
    this.versions = [factory.version];
  }

  async deserialize(serialized: SerializedThread, context: ThreadReadContext): Promise<AgentThread> {
    rejectField(serialized, 'serviceThreadId', `a "${this.type}" thread keeps its history in its store, not on a service.`);
    if (serialized.store === undefined) throw new SerializationError('$.store', `a "${this.type}" thread needs its store state.`);
    const store = await this.factory.restore(serialized.store, {
      path: '$.store',
      version: serialized.version,
      registry: context.registry,
    });
    return new AgentThread({ origin: originOf(serialized), messageStore: store, state: serialized.state });
  }
}
