import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type ChatMessage,
  type ChatMessageStore,
  type ChatMessageStoreFactory,
  type JsonObject,
  type ListMessagesOptions,
  SerializationError,
  type SerializationRegistry,
  type StoreRestoreContext,
} from 'skein';

export const JSON_FILE_STORE_ID = 'json-file';

/** Keys become file names: nothing that could leave the directory. */
const KEY = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * One JSON file per thread (`<directory>/<key>.json`). The serialized thread holds only the key;
 * the messages stay in the file. A turn is written to a temporary file and renamed over the
 * old one, so a crash leaves the previous turn intact, never half a turn. One writer per file
 * at a time (appends within this process are queued); use a database store to scale out.
 */
export class JsonFileChatMessageStore implements ChatMessageStore {
  readonly type = JSON_FILE_STORE_ID;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly key: string,
    readonly directory: string,
    private readonly registry: () => SerializationRegistry,
  ) {}

  get file(): string {
    return path.join(this.directory, `${this.key}.json`);
  }

  async listMessages(options: ListMessagesOptions = {}): Promise<ChatMessage[]> {
    const messages = await this.#read();
    return options.last === undefined ? messages : messages.slice(Math.max(0, messages.length - options.last));
  }

  addMessages(messages: readonly ChatMessage[]): Promise<void> {
    const write = this.#tail.then(async () => {
      const all = [...(await this.#read()), ...messages];
      await mkdir(this.directory, { recursive: true });
      const temp = `${this.file}.${randomUUID()}.tmp`;
      await writeFile(temp, JSON.stringify({ version: 1, messages: all }));
      await rename(temp, this.file);
    });
    this.#tail = write.catch(() => undefined); // a failed append must not block the next one
    return write;
  }

  async serialize(): Promise<JsonObject> {
    return { key: this.key };
  }

  async clear(): Promise<void> {
    await rm(this.file, { force: true });
  }

  /** The file is data from disk: read it as untrusted, like any serialized thread. */
  async #read(): Promise<ChatMessage[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []; // no turn yet
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new SerializationError(this.file, `not valid JSON: ${(error as Error).message}`);
    }
    const messages = (parsed as { messages?: unknown } | null)?.messages;
    return this.registry().readMessages(messages, `${this.file}#messages`);
  }
}

export class JsonFileChatMessageStoreFactory implements ChatMessageStoreFactory {
  readonly type = JSON_FILE_STORE_ID;
  readonly version = 1;

  constructor(
    readonly directory: string,
    /** Lazy: the registry itself is built from the serializers this plugin contributes. */
    private readonly registry: () => SerializationRegistry,
  ) {}

  create(): ChatMessageStore {
    return new JsonFileChatMessageStore(randomUUID(), this.directory, this.registry);
  }

  restore(state: JsonObject, context: StoreRestoreContext): ChatMessageStore {
    const extra = Object.keys(state).find((k) => k !== 'key');
    if (extra !== undefined) throw new SerializationError(`${context.path}.${extra}`, 'unexpected field; a json-file store holds only "key".');
    if (typeof state.key !== 'string' || !KEY.test(state.key)) {
      throw new SerializationError(`${context.path}.key`, `expected 1-64 letters, digits, "_" or "-", found ${JSON.stringify(state.key)}.`);
    }
    return new JsonFileChatMessageStore(state.key, this.directory, () => context.registry);
  }
}
