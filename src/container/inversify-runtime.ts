import { createRequire } from 'node:module';
import type * as Inversify from 'inversify';
import type { Container, ContainerModule, ContainerModuleLoadOptions, ContainerOptions } from 'inversify';
import { ConfigurationError } from '../errors/skein-error.js';

let loaded: typeof Inversify | undefined;

/**
 * inversify, loaded on first use rather than on import. Its core is some 300 ES modules (about
 * 9 MiB of RSS); an app that builds agents by hand, or a CLI that only prints help, never pays
 * for it. `require` of an ES module (Node >= 20.19) shares the module cache with `import`, so
 * this is the same `Container` class an app imports itself.
 */
export function inversify(): typeof Inversify {
  return (loaded ??= loadInversify(createRequire(import.meta.url)));
}

/** Loads inversify through `require`; a Node without `require` of ES modules gets a clear error, not ERR_REQUIRE_ESM. */
export function loadInversify(require: (id: string) => unknown): typeof Inversify {
  try {
    return require('inversify') as typeof Inversify;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_REQUIRE_ESM') throw error;
    throw new ConfigurationError(
      `Skein loads inversify (an ES module) on first use with require(), which needs Node >= 20.19 or >= 22.12; found Node ${process.versions.node}. Upgrade Node to build a container.`,
    );
  }
}

/** `new ContainerModule(load)`, loading inversify on first use (plugins build their module with it). */
export function containerModule(load: (options: ContainerModuleLoadOptions) => void): ContainerModule {
  return new (inversify().ContainerModule)(load);
}

/** `new Container(options)`, loading inversify on first use. */
export function newContainer(options?: ContainerOptions): Container {
  return new (inversify().Container)(options);
}
