import type { Newable } from 'inversify';
import { containerModule } from '../container/inversify-runtime.js';
import type { SkeinPlugin } from '../container/skein-plugin.js';

/**
 * Where the stores say what an app should know but need not fail on: today, that the server's
 * settings can lose acknowledged turns (see docs/stores.md, "Durability"). Replace it to route
 * the warning into your own logging: pass `logger` to a store's options, or bind it in the
 * container, where every store plugin without its own `logger` picks it up:
 *
 * @example
 * ```ts
 * const container = createContainer({ plugins: [redisStorePlugin({ url })] });
 * container.bind(StoreLogger).toConstantValue({ warn: (message) => log.warn({ component: 'skein' }, message) });
 * ```
 */
export const StoreLogger = Symbol('StoreLogger');
export interface StoreLogger {
  warn(message: string): void;
}

const emitted = new Set<string>();

/**
 * The default StoreLogger: a Node process warning (`process.on('warning')` sees it; the default
 * handler prints it once to stderr; `--no-warnings` silences it) of type `SkeinStoreWarning`,
 * code `SKEIN_STORE_WARNING`. The same message is emitted once per process, however many
 * factories point at the same server.
 */
export const processWarningStoreLogger: StoreLogger = {
  warn(message) {
    if (emitted.has(message)) return;
    emitted.add(message);
    process.emitWarning(message, { type: 'SkeinStoreWarning', code: 'SKEIN_STORE_WARNING' });
  },
};

/**
 * Wraps a store plugin so its factory takes the container's `StoreLogger` when one is bound
 * (`adopt` decides, e.g. only when the options named none).
 */
export function withStoreLogger<F>(plugin: SkeinPlugin, factoryType: Newable<F>, adopt: (factory: F, logger: StoreLogger) => void): SkeinPlugin {
  return {
    ...plugin,
    module: containerModule((options) => {
      void plugin.module.load(options);
      options.onActivation<F>(factoryType, (context, factory) => {
        const logger = context.get<StoreLogger>(StoreLogger, { optional: true });
        if (logger) adopt(factory, logger);
        return factory;
      });
    }),
  };
}
