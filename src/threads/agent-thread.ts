import { ThreadBusyError, ThreadCompatibilityError } from '../errors/skein-error.js';
import type { JsonObject } from '../serialization/json.js';
import type { ChatMessageStore } from './chat-message-store-contract.js';

/** Which provider (client id) and agent made a thread. */
export interface ThreadOrigin {
  provider: string;
  agent?: string;
}

/** The plain-JSON form of a thread. `$type` picks the ThreadSerializer that reads it back. */
export interface SerializedThread {
  $type: string;
  version: number;
  provider: string;
  agent?: string;
  serviceThreadId?: string;
  /** The message store's own state (its messages, or its key for a database store). */
  store?: JsonObject;
  /** Provider and extension state that must survive a resume. */
  state?: JsonObject;
}

/** `queue` (default): a second run waits for the first; `reject`: it fails with ThreadBusyError. */
export type ThreadConcurrency = 'queue' | 'reject';

export const SERVICE_THREAD_TYPE = 'service';
export const UNSTARTED_THREAD_TYPE = 'unstarted';
export const THREAD_FORMAT_VERSION = 1;

export interface AgentThreadInit {
  origin: ThreadOrigin;
  serviceThreadId?: string;
  messageStore?: ChatMessageStore;
  state?: JsonObject;
}

/**
 * One conversation. It holds either a service thread id (the service keeps the history) or a
 * message store (Skein keeps it), never both; a new thread may hold neither until its first run.
 */
export class AgentThread {
  readonly origin: ThreadOrigin;
  /** Extension state (provider continuation data, context providers); JSON only. */
  state: JsonObject;
  #serviceThreadId: string | undefined;
  #messageStore: ChatMessageStore | undefined;
  /**
   * The run lock in one field, to keep idle threads small: free (undefined), held with nobody
   * waiting (HELD), or held with the waiting runs in arrival order.
   */
  #lock: typeof HELD | (() => void)[] | undefined;

  constructor(init: AgentThreadInit) {
    if (init.serviceThreadId !== undefined && init.messageStore !== undefined) {
      throw new ThreadCompatibilityError('A thread holds a service thread id or a message store, not both.');
    }
    this.origin = sharedOrigin(init.origin);
    this.#serviceThreadId = init.serviceThreadId;
    this.#messageStore = init.messageStore;
    this.state = init.state ?? {};
  }

  get serviceThreadId(): string | undefined {
    return this.#serviceThreadId;
  }

  get messageStore(): ChatMessageStore | undefined {
    return this.#messageStore;
  }

  /** Records the service's thread id; fails on a thread whose history is in a message store. */
  setServiceThreadId(id: string): void {
    if (this.#messageStore) {
      throw new ThreadCompatibilityError(
        `The service returned conversation id "${id}" for a thread whose history is kept in a "${this.#messageStore.type}" message store. ` +
          'A thread cannot be both; start a new thread to use service-managed history.',
      );
    }
    this.#serviceThreadId = id;
  }

  attachMessageStore(store: ChatMessageStore): void {
    if (this.#serviceThreadId !== undefined) {
      throw new ThreadCompatibilityError(
        `Thread ${this.#serviceThreadId} is kept by the service; it cannot also take a "${store.type}" message store.`,
      );
    }
    this.#messageStore = store;
  }

  async serialize(): Promise<SerializedThread> {
    const out: SerializedThread = { $type: UNSTARTED_THREAD_TYPE, version: THREAD_FORMAT_VERSION, provider: this.origin.provider };
    if (this.origin.agent !== undefined) out.agent = this.origin.agent;
    if (this.#messageStore) {
      out.$type = this.#messageStore.type;
      out.store = await this.#messageStore.serialize();
    } else if (this.#serviceThreadId !== undefined) {
      out.$type = SERVICE_THREAD_TYPE;
      out.serviceThreadId = this.#serviceThreadId;
    }
    if (Object.keys(this.state).length > 0) out.state = this.state;
    return out;
  }

  /** True while a run holds this thread. */
  get busy(): boolean {
    return this.#lock !== undefined;
  }

  /**
   * Waits for this thread to be free (or throws ThreadBusyError with `reject`) and returns the
   * release function. Turns never interleave on one thread object.
   */
  async acquire(policy: ThreadConcurrency = 'queue'): Promise<() => void> {
    if (policy === 'reject' && this.#lock !== undefined) {
      throw new ThreadBusyError('This thread is already running a turn; wait for it or use the "queue" concurrency policy.');
    }
    if (this.#lock === undefined) this.#lock = HELD;
    else await new Promise<void>((resolve) => this.#wait(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Hand the thread to the next waiter, in arrival order; it stays held meanwhile.
      const waiters = this.#lock;
      if (waiters === HELD || waiters === undefined) {
        this.#lock = undefined;
        return;
      }
      const next = waiters.shift()!;
      if (waiters.length === 0) this.#lock = HELD;
      next();
    };
  }

  /** Queues a run behind the one holding the thread. */
  #wait(resume: () => void): void {
    if (this.#lock === HELD || this.#lock === undefined) this.#lock = [resume];
    else this.#lock.push(resume);
  }
}

const HELD = Symbol('held');

const MAX_SHARED_ORIGINS = 1024;
const origins = new Map<string, ThreadOrigin>();

/**
 * One frozen origin object per provider and agent, shared by their threads: an origin never
 * changes, and a copy per thread is a visible share of a small idle thread. Bounded, since
 * deserialized threads may name any agent.
 */
function sharedOrigin(origin: ThreadOrigin): ThreadOrigin {
  const key = origin.agent === undefined ? origin.provider : `${origin.provider}\u0000${origin.agent}`;
  let shared = origins.get(key);
  if (shared === undefined) {
    shared = Object.freeze(origin.agent === undefined ? { provider: origin.provider } : { provider: origin.provider, agent: origin.agent });
    if (origins.size < MAX_SHARED_ORIGINS) origins.set(key, shared);
  }
  return shared;
}
