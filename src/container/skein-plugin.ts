import type { ContainerModule } from 'inversify';

/**
 * A plugin: an id and an inversify ContainerModule. Its module binds, named by client or store
 * id, its `ChatClient`s, `ThreadFactory` and/or `ChatMessageStoreFactory`, and contributes its
 * `ThreadSerializer`s and `ContentKindSerializer`s (collected with getAll).
 */
export const SkeinPlugin = Symbol('SkeinPlugin');
export interface SkeinPlugin {
  readonly id: string;
  readonly module: ContainerModule;
  /** Client ids this plugin binds (what `agents.<name>.client` may name). */
  readonly clients?: readonly string[];
  /** Store ids this plugin binds (what `agents.<name>.messageStore` may name). */
  readonly stores?: readonly string[];
}
