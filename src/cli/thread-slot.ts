import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SerializedThread } from '../threads/agent-thread.js';
import { SkeinError } from '../errors/skein-error.js';
import { ThreadRegistry, writeAtomically } from './thread-registry.js';

/** Where a chat keeps its thread between turns and between processes. */
export interface ThreadSlot {
  /** What `/thread` prints: the id (and its file) or the file path. */
  describe(): string;
  /** The serialized thread (untrusted JSON), or undefined when nothing was saved yet. */
  load(): Promise<unknown>;
  save(thread: SerializedThread): Promise<void>;
}

/** `--thread path/to/file.json`: the file holds exactly the serialized thread. */
export class FileThreadSlot implements ThreadSlot {
  constructor(readonly file: string) {}

  describe(): string {
    return `file ${this.file}`;
  }

  async load(): Promise<unknown> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new SkeinError(`Cannot read thread file ${this.file}: ${(error as Error).message}`);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new SkeinError(`Thread file ${this.file} is not valid JSON (${(error as Error).message}); fix it or pick another file.`);
    }
  }

  async save(thread: SerializedThread): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    await writeAtomically(this.file, `${JSON.stringify(thread, undefined, 2)}\n`);
  }
}

/** `--thread <id>` (or none): a record in the thread registry, listed by `skein threads`. */
export class RegistryThreadSlot implements ThreadSlot {
  #createdAt: string | undefined;

  constructor(
    readonly registry: ThreadRegistry,
    readonly id: string,
    readonly agent: string,
    readonly config: string,
  ) {}

  describe(): string {
    return `${this.id} (${this.registry.pathOf(this.id)})`;
  }

  async load(): Promise<unknown> {
    const record = await this.registry.read(this.id);
    if (!record) return undefined;
    if (record.agent !== this.agent) {
      throw new SkeinError(
        `Thread ${this.id} belongs to agent "${record.agent}", not "${this.agent}". Continue it with --agent ${record.agent}, or start a new thread.`,
      );
    }
    this.#createdAt = record.createdAt;
    return record.thread;
  }

  async save(thread: SerializedThread): Promise<void> {
    const now = new Date().toISOString();
    this.#createdAt ??= now;
    await this.registry.write({
      id: this.id,
      agent: this.agent,
      config: this.config,
      provider: thread.provider,
      createdAt: this.#createdAt,
      updatedAt: now,
      thread,
    });
  }
}

/** A value that names a file (has a path separator or ends in .json) rather than a registry id. */
export function isThreadFile(value: string): boolean {
  return value.endsWith('.json') || value.includes('/') || value.includes(path.sep);
}
