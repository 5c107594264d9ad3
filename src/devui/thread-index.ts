import { randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatMessage } from '../messages/chat-message.js';
import type { SerializedThread } from '../threads/agent-thread.js';

/** One thread the Dev UI knows: which agent it belongs to and its serialized form. */
export interface ThreadIndexEntry {
  id: string;
  /** The agent's name in the config (`agents.<name>`). */
  agent: string;
  title: string;
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
  /** What `thread.serialize()` returned after the last turn (a durable store's key, not its messages). */
  serialized: SerializedThread;
  /**
   * Messages this UI saw on a service thread: the service keeps the history, and an agent has no
   * generic way to list it, so this record is what the page can show.
   */
  transcript?: ChatMessage[];
  /** How many tool calls wait for the user's approval after the last turn (for the sidebar). */
  pendingApprovals?: number;
  /**
   * The last durable run on this thread (a `durability:` agent): until `saved`, any Dev UI process
   * on this index saves its turn here when it ends (or undoes its start when it was cancelled);
   * a page reads it on by its id either way. `waiting` while it waits for approvals (read on after
   * `after` once they are answered); `newThread` while the entry was made for this run and no turn
   * of it landed (a cancelled run then removes the entry); `transcriptBefore`, a service thread's
   * transcript length before this run added the user's message.
   */
  durableRun?: { runId: string; saved?: boolean; waiting?: { after?: number }; newThread?: boolean; transcriptBefore?: number };
}

const ID = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * The Dev UI's list of threads: one JSON file per thread in a directory. It holds the serialized
 * thread (not a copy of the history), so with a durable message store the store stays the only
 * copy of the messages.
 */
export class ThreadIndex {
  constructor(readonly directory: string) {}

  static newId(): string {
    return randomUUID();
  }

  static isValidId(id: string): boolean {
    return ID.test(id);
  }

  /** Every entry, most recently updated first. Unreadable files are skipped, not fatal. */
  async list(): Promise<ThreadIndexEntry[]> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const entries: ThreadIndexEntry[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const entry = await this.get(name.slice(0, -'.json'.length)).catch(() => undefined);
      if (entry) entries.push(entry);
    }
    return entries.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.createdAt.localeCompare(a.createdAt));
  }

  async get(id: string): Promise<ThreadIndexEntry | undefined> {
    if (!ThreadIndex.isValidId(id)) return undefined;
    let text: string;
    try {
      text = await readFile(this.#file(id), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return JSON.parse(text) as ThreadIndexEntry;
  }

  /** Writes the entry whole (temp file + rename), so a crash never leaves half a file. */
  async put(entry: ThreadIndexEntry): Promise<void> {
    if (!ThreadIndex.isValidId(entry.id)) throw new TypeError(`Invalid thread id "${entry.id}".`);
    await mkdir(this.directory, { recursive: true });
    const temp = `${this.#file(entry.id)}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temp, JSON.stringify(entry, undefined, 2), 'utf8');
    await rename(temp, this.#file(entry.id));
  }

  async delete(id: string): Promise<boolean> {
    if (!ThreadIndex.isValidId(id)) return false;
    const existed = (await this.get(id)) !== undefined;
    await rm(this.#file(id), { force: true });
    return existed;
  }

  #file(id: string): string {
    return path.join(this.directory, `${id}.json`);
  }
}
