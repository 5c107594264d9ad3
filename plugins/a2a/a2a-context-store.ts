import { type SerializedThread, ThreadConflictError } from 'skein';
import { rememberLoadedJson, savingJsonOf } from './thread-json.js';

/** One A2A context's thread as the server keeps it, with the version its next save must match. */
export interface StoredA2AContext {
  thread: SerializedThread;
  version: number;
  /**
   * The user who started the context (the SDK `User.userName`; `''` for an unauthenticated
   * caller). Only that user may continue it or read its tasks; anyone else gets not-found.
   */
  owner: string;
}

/**
 * Where an A2AServer keeps the serialized thread of each A2A `contextId`. A store shared by
 * several server instances lets a conversation's turns land on any of them: `save` is checked
 * against the version that was loaded, so two instances never overwrite each other's turn.
 */
export const A2AContextStore = Symbol('A2AContextStore');
export interface A2AContextStore {
  load(contextId: string): Promise<StoredA2AContext | undefined>;
  /**
   * Saves the thread if the stored version is still `expectedVersion` (`undefined`: not stored
   * yet) and returns the new version; otherwise throws ThreadConflictError and writes nothing.
   * `owner` is recorded by the first save; later saves keep the stored owner.
   */
  save(contextId: string, thread: SerializedThread, expectedVersion: number | undefined, owner: string): Promise<number>;
  delete(contextId: string): Promise<void>;
}

/** The default: a Map of JSON text (copies in and out, so callers never share objects with it). */
export class InMemoryA2AContextStore implements A2AContextStore {
  readonly #entries = new Map<string, { json: string; version: number; owner: string }>();

  async load(contextId: string): Promise<StoredA2AContext | undefined> {
    const entry = this.#entries.get(contextId);
    if (!entry) return undefined;
    const { json, version, owner } = entry;
    // Parsed on first read (ownership checks read only the owner); its JSON text is known.
    let thread: SerializedThread | undefined;
    return {
      get thread(): SerializedThread {
        if (thread === undefined) {
          thread = JSON.parse(json) as SerializedThread;
          rememberLoadedJson(thread, json);
        }
        return thread;
      },
      set thread(value: SerializedThread) {
        thread = value;
      },
      version,
      owner,
    };
  }

  async save(contextId: string, thread: SerializedThread, expectedVersion: number | undefined, owner: string): Promise<number> {
    const entry = this.#entries.get(contextId);
    const current = entry?.version;
    if (current !== expectedVersion) {
      throw new ThreadConflictError(
        `A2A context ${contextId} changed since this turn read it (expected version ${expectedVersion ?? 'none'}, found ${current ?? 'none'}); send the turn again.`,
        expectedVersion,
        current,
      );
    }
    const version = (current ?? 0) + 1;
    this.#entries.set(contextId, { json: savingJsonOf(thread) ?? JSON.stringify(thread), version, owner: entry?.owner ?? owner });
    return version;
  }

  async delete(contextId: string): Promise<void> {
    this.#entries.delete(contextId);
  }

  get size(): number {
    return this.#entries.size;
  }
}
