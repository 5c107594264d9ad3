import { createRequire } from 'node:module';
import type * as Inversify from 'inversify';
import type { Container, ContainerModule, ContainerModuleLoadOptions, ContainerOptions } from 'inversify';

let loaded: typeof Inversify | undefined;

/**
 * inversify, loaded on first use rather than on import. Its core is some 300 ES modules (about
 * 9 MiB of RSS); an app that builds agents by hand, or a CLI that only prints help, never pays
 * for it. `require` of an ES module (Node >= 20.19) shares the module cache with `import`, so
 * this is the same `Container` class an app imports itself.
 */
export function inversify(): typeof Inversify {
  return (loaded ??= createRequire(import.meta.url)('inversify') as typeof Inversify);
}

/** `new ContainerModule(load)`, loading inversify on first use (plugins build their module with it). */
export function containerModule(load: (options: ContainerModuleLoadOptions) => void): ContainerModule {
  return new (inversify().ContainerModule)(load);
}

/** `new Container(options)`, loading inversify on first use. */
export function newContainer(options?: ContainerOptions): Container {
  return new (inversify().Container)(options);
}
