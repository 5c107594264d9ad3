import type { Message } from '@ag-ui/core';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type SerializedThread, ThreadConflictError } from 'skein';
import type { AgUiDurableRun } from './ag-ui-durable.js';

/**
 * One AG-UI thread as the server keeps it between runs. The messages are not here: they are in
 * the agent's message store (its key is in `thread`) or on the service.
 */
export interface AgUiThreadRecord {
  /** The agent (its path name) that serves the thread. */
  agent: string;
  /** Who created the thread (the auth hook's user; `''` on an open server). Anyone else gets not-found. */
  owner: string;
  /** The thread now answering for this `threadId` (after an edited history, the newest branch). */
  thread: SerializedThread;
  /** Earlier branches this threadId pointed at before the client edited its history: kept, never deleted. */
  branches?: SerializedThread[];
  /**
   * Service threads only (the service keeps the history, with its own message ids): the messages
   * as the client knows them, so a reload shows them and their ids can be matched.
   */
  transcript?: Message[];
  /** A durable agent's run on this thread that has not finished: its id and how far the server streamed it. */
  durableRun?: AgUiDurableRun;
}

export interface StoredAgUiThread extends AgUiThreadRecord {
  version: number;
}

/**
 * Where an AgUiServer keeps each `threadId`'s record. `save` is checked against the version that
 * was loaded, so two server instances sharing a store never overwrite each other's turn.
 */
export const AgUiThreadStore = Symbol('AgUiThreadStore');
export interface AgUiThreadStore {
  load(threadId: string): Promise<StoredAgUiThread | undefined>;
  /**
   * Saves the record if the stored version is still `expectedVersion` (`undefined`: not stored
   * yet) and returns the new version; otherwise throws ThreadConflictError and writes nothing.
   */
  save(threadId: string, record: AgUiThreadRecord, expectedVersion: number | undefined): Promise<number>;
}

/** The error a save throws when the stored version is not the one the run read. */
export function conflictError(threadId: string, expected: number | undefined, found: number | undefined): ThreadConflictError {
  return new ThreadConflictError(
    `AG-UI thread ${threadId} changed since this run read it (expected version ${expected ?? 'none'}, found ${found ?? 'none'}); send the run again.`,
    expected,
    found,
  );
}

/**
 * The default: records in this process. A record is kept as saved, not as JSON: JSON both ways
 * cost two passes over the whole history per turn (an in-memory message store's record holds
 * its messages). Callers still never share a stored thread with another: a loaded record's
 * `thread` is copied when it is read (an AgUiRunner reads it only when it has no live thread of
 * that version), and on save the thread's `state` is copied (a live thread sets its state keys
 * in place). Messages are shared: stored messages are never changed.
 */
export class InMemoryAgUiThreadStore implements AgUiThreadStore {
  readonly #entries = new Map<string, { record: AgUiThreadRecord; version: number }>();

  async load(threadId: string): Promise<StoredAgUiThread | undefined> {
    const entry = this.#entries.get(threadId);
    if (entry === undefined) return undefined;
    const { thread, ...rest } = entry.record;
    let copy: SerializedThread | undefined;
    return {
      ...rest,
      version: entry.version,
      get thread() {
        return (copy ??= structuredClone(thread));
      },
    };
  }

  async save(threadId: string, record: AgUiThreadRecord, expectedVersion: number | undefined): Promise<number> {
    const current = this.#entries.get(threadId)?.version;
    if (current !== expectedVersion) throw conflictError(threadId, expectedVersion, current);
    const version = (current ?? 0) + 1;
    const { state } = record.thread;
    this.#entries.set(threadId, { record: state ? { ...record, thread: { ...record.thread, state: structuredClone(state) } } : record, version });
    return version;
  }
}

/**
 * One JSON file per thread in a directory (written whole: temp file + rename), so threads outlive
 * the process: what `skein ag-ui serve` uses. The version check holds within one process; give
 * several server instances a shared store of your own.
 */
export class FileAgUiThreadStore implements AgUiThreadStore {
  constructor(readonly directory: string) {}

  async load(threadId: string): Promise<StoredAgUiThread | undefined> {
    try {
      return JSON.parse(await readFile(this.#file(threadId), 'utf8')) as StoredAgUiThread;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async save(threadId: string, record: AgUiThreadRecord, expectedVersion: number | undefined): Promise<number> {
    const current = (await this.load(threadId))?.version;
    if (current !== expectedVersion) throw conflictError(threadId, expectedVersion, current);
    const version = (current ?? 0) + 1;
    await mkdir(this.directory, { recursive: true });
    const temp = `${this.#file(threadId)}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temp, JSON.stringify({ ...record, version }), 'utf8');
    await rename(temp, this.#file(threadId));
    return version;
  }

  /** Thread ids are checked by the server (letters, digits, `_.:-`); `:` is not portable in file names. */
  #file(threadId: string): string {
    return path.join(this.directory, `${encodeURIComponent(threadId).replace(/\./g, '%2E')}.json`);
  }
}
