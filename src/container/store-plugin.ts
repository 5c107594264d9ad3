import type { Newable } from 'inversify';
import { SerializationRegistry } from '../serialization/serialization-registry.js';
import { StoreThreadSerializer } from '../serialization/core-thread-serializers.js';
import { ThreadSerializer } from '../serialization/thread-serializer.js';
import { type ChatMessageStore, ChatMessageStoreFactory } from '../threads/chat-message-store.js';
import { type StoreLogger, withStoreLogger } from '../threads/store-logger.js';
import { ServerStoreFactory, type VersionedStoreFactory, type VersionedStoreOptions } from '../threads/versioned-store-factory.js';
import type { SkeinPlugin } from './skein-plugin.js';
import { containerModule } from './inversify-runtime.js';

export interface StorePluginSpec<F extends ChatMessageStoreFactory> {
  /** Plugin id and store id (what agents name as `messageStore`). */
  id: string;
  /** The factory class: bound to itself, so an app can `container.get(it)` to close or migrate. */
  factoryType: Newable<F>;
  create: () => F;
  /** Give the factory the container's registry (so stored messages are checked against every content kind the container knows). */
  adoptRegistry?: (factory: F, registry: SerializationRegistry) => void;
}

/**
 * The module every message-store plugin needs: its factory as a singleton, the
 * ChatMessageStoreFactory named by the store id, and the store's thread serializer.
 */
export function storePlugin<F extends ChatMessageStoreFactory>(spec: StorePluginSpec<F>): SkeinPlugin {
  return {
    id: spec.id,
    stores: [spec.id],
    module: containerModule(({ bind, onActivation }) => {
      bind(spec.factoryType).toDynamicValue(spec.create).inSingletonScope();
      bind<ChatMessageStoreFactory>(ChatMessageStoreFactory)
        .toDynamicValue((context) => context.get(spec.factoryType))
        .whenNamed(spec.id);
      bind<ThreadSerializer>(ThreadSerializer)
        .toDynamicValue((context) => new StoreThreadSerializer(context.get(spec.factoryType)))
        .inSingletonScope();
      const adopt = spec.adoptRegistry;
      if (adopt) {
        onActivation<SerializationRegistry>(SerializationRegistry, (context, registry) => {
          adopt(context.get(spec.factoryType), registry);
          return registry;
        });
      }
    }),
  };
}

export interface VersionedStorePluginSpec<F extends VersionedStoreFactory<ChatMessageStore, VersionedStoreOptions>> {
  id: string;
  factoryType: Newable<F>;
  create: () => F;
  /** The options the factory is made with: what they name wins over the container's bindings. */
  options: VersionedStoreOptions & { logger?: StoreLogger };
}

/**
 * The plugin of a database store (a VersionedStoreFactory): `storePlugin`, with the factory
 * taking the container's registry unless its options name one, and, for a server store, the
 * container's StoreLogger unless they name a logger.
 */
export function versionedStorePlugin<F extends VersionedStoreFactory<ChatMessageStore, VersionedStoreOptions>>(spec: VersionedStorePluginSpec<F>): SkeinPlugin {
  const { id, factoryType, create, options } = spec;
  const plugin = storePlugin({
    id,
    factoryType,
    create,
    // Messages read back are checked against every content kind the container knows.
    adoptRegistry: options.serializationRegistry ? undefined : (factory, registry) => (factory.serializationRegistry = registry),
  });
  if (options.logger || !(factoryType.prototype instanceof ServerStoreFactory)) return plugin;
  return withStoreLogger(plugin, factoryType, (factory, logger) => {
    if (factory instanceof ServerStoreFactory) factory.logger = logger;
  });
}
