import { ContainerModule } from 'inversify';
import { z } from 'zod';
import { ChatMessageStoreFactory, SerializationRegistry, type SkeinPlugin, StoreThreadSerializer, ThreadSerializer } from 'skein';
import { JSON_FILE_STORE_ID, JsonFileChatMessageStoreFactory } from './json-file-chat-message-store.js';

export interface JsonFileStorePluginOptions {
  /** Where the thread files go. */
  directory: string;
}

/**
 * A third-party message store as a Skein plugin: agents choose it with `messageStore: 'json-file'`;
 * threads it makes serialize as `{ "$type": "json-file", ..., "store": { "key": ... } }`.
 */
export function jsonFileStorePlugin(options: JsonFileStorePluginOptions): SkeinPlugin {
  return {
    id: JSON_FILE_STORE_ID,
    stores: [JSON_FILE_STORE_ID],
    module: new ContainerModule(({ bind }) => {
      bind(JsonFileChatMessageStoreFactory)
        .toDynamicValue((context) => new JsonFileChatMessageStoreFactory(options.directory, () => context.get<SerializationRegistry>(SerializationRegistry)))
        .inSingletonScope();
      bind<ChatMessageStoreFactory>(ChatMessageStoreFactory)
        .toDynamicValue((context) => context.get(JsonFileChatMessageStoreFactory))
        .whenNamed(JSON_FILE_STORE_ID);
      // So the registry reads `$type: json-file` threads, whichever agent deserializes them.
      bind<ThreadSerializer>(ThreadSerializer).toDynamicValue((context) => new StoreThreadSerializer(context.get(JsonFileChatMessageStoreFactory)));
    }),
  };
}

/** Settings a config file may give it: `plugins: { json-file: { module: ./json-file-store/index.js, directory: ./threads } }`. */
jsonFileStorePlugin.configSchema = z.object({ directory: z.string().min(1) }).strict();
