import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SerializedThread } from '../threads/agent-thread.js';
import { SkeinError } from '../errors/skein-error.js';

/** One entry of the thread registry: a serialized thread plus what the CLI needs to find it again. */
export interface ThreadRecord {
  id: string;
  /** The agent's config key (what `--agent` names). */
  agent: string;
  /** The config file (absolute) the thread was made with, so `threads show/delete` can reload it. */
  config?: string;
  provider: string;
  createdAt: string;
  updatedAt: string;
  thread: SerializedThread;
}

export const DEFAULT_THREADS_DIR = path.join('.skein', 'threads');
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * Threads the CLI keeps by id: one JSON file per thread under `.skein/threads/`. A thread whose
 * store is a database keeps only its key here (the serialized thread holds no messages then).
 */
export class ThreadRegistry {
  constructor(readonly dir: string) {}

  static isId(text: string): boolean {
    return ID.test(text);
  }

  /** A fresh id, sortable by creation time. */
  static newId(): string {
    return `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  }

  pathOf(id: string): string {
    if (!ThreadRegistry.isId(id)) {
      throw new SkeinError(`"${id}" is not a thread id: use 1-64 letters, digits, "_" or "-" (or give a path ending in .json for a thread file).`);
    }
    return path.join(this.dir, `${id}.json`);
  }

  async read(id: string): Promise<ThreadRecord | undefined> {
    const file = this.pathOf(id);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return parseRecord(text, file);
  }

  /** Writes atomically (temp file + rename), so a crash mid-write never leaves half a thread. */
  async write(record: ThreadRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeAtomically(this.pathOf(record.id), `${JSON.stringify(record, undefined, 2)}\n`);
  }

  /** Every readable record, newest first; unreadable files are reported, not fatal. */
  async list(): Promise<{ records: ThreadRecord[]; problems: string[] }> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], problems: [] };
      throw error;
    }
    const records: ThreadRecord[] = [];
    const problems: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.json') && ThreadRegistry.isId(n.slice(0, -5)))) {
      try {
        const file = path.join(this.dir, name);
        records.push(parseRecord(await readFile(file, 'utf8'), file));
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    records.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id));
    return { records, problems };
  }

  /** Removes the record; false when there was none. */
  async delete(id: string): Promise<boolean> {
    const file = this.pathOf(id);
    try {
      await rm(file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }
}

export async function writeAtomically(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(3).toString('hex')}.tmp`;
  await writeFile(temp, text, 'utf8');
  try {
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

function parseRecord(text: string, file: string): ThreadRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new SkeinError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  const r = raw as Partial<ThreadRecord> | null;
  const strings = ['id', 'agent', 'provider', 'createdAt', 'updatedAt'] as const;
  const bad = strings.find((key) => typeof r?.[key] !== 'string');
  if (!r || typeof r !== 'object' || bad || typeof r.thread !== 'object' || r.thread === null || Array.isArray(r.thread)) {
    throw new SkeinError(`${file} is not a Skein thread record: expected { id, agent, provider, createdAt, updatedAt, thread }${bad ? `, "${bad}" is missing or not a string` : ''}.`);
  }
  return r as ThreadRecord;
}
