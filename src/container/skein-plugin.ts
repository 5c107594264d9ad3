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
  /** Durable execution engines it provides (a `DurableRunner` bound under that name), e.g. `dbos`. */
  readonly durableEngines?: readonly string[];
  /**
   * Tool references this plugin resolves in `agents.<name>.tools` (`<prefix>:<rest>`, e.g.
   * `mcp:files`); `check` returns a problem for a bad reference, so it is reported with the rest
   * of the config. The plugin's module binds a `ToolReferenceResolver` with the same prefix.
   */
  readonly toolReferences?: { readonly prefix: string; check(reference: string): string | undefined };
  /**
   * Checks the provider keys (those the core does not know) of an agent whose client this plugin
   * provides: one problem per bad key (`key` relative to the agent), reported with the rest of the config.
   */
  checkAgentOptions?(client: string, options: Readonly<Record<string, unknown>>): { key: string; problem: string }[];
}
