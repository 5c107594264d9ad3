/** What a plugin that failed to load would have provided; `undefined` lists mean "unknown". */
export interface FailedPlugin {
  readonly id: string;
  readonly clients?: readonly string[];
  readonly stores?: readonly string[];
  /** Tool reference prefixes it resolves (`mcp` for `mcp:files`). */
  readonly toolPrefixes?: readonly string[];
}

/**
 * The problems of one config, each with its path, reported once per root cause: a problem at a
 * path already reported (or under it) is dropped, so an unset variable is not also "too short",
 * and a value that does not parse is not also "the wrong type". It also remembers the plugins
 * that failed, so agents naming what such a plugin provides are not reported a second time.
 */
export class ConfigProblems {
  readonly #messages: string[] = [];
  readonly #paths: string[] = [];
  readonly #failedPlugins: FailedPlugin[] = [];

  /** Adds `path: message` unless `path` (or a path above it) already has a problem. */
  add(path: string, message: string): void {
    if (this.covers(path)) return;
    this.#paths.push(path);
    this.#messages.push(`${path || '(root)'}: ${message}`);
  }

  /** One message for a root cause found at several paths (e.g. one unset variable used twice). */
  addShared(paths: readonly string[], message: string): void {
    const fresh = paths.filter((p) => !this.covers(p));
    if (!fresh.length) return;
    this.#paths.push(...fresh);
    this.#messages.push(`${fresh[0] || '(root)'}: ${message}`);
  }

  /** A plain message without a path (a file that cannot be read at all). */
  addMessage(message: string): void {
    this.#messages.push(message);
  }

  /** True when `path` or a path above it already has a problem. */
  covers(path: string): boolean {
    return this.#paths.some((p) => p === path || p === '' || path.startsWith(`${p}.`) || path.startsWith(`${p}[`));
  }

  /** True when `path` or anything under it has a problem. */
  anyAt(path: string): boolean {
    return this.#paths.some((p) => p === path || p.startsWith(`${path}.`) || p.startsWith(`${path}[`)) || this.covers(path);
  }

  pluginFailed(plugin: FailedPlugin): void {
    this.#failedPlugins.push(plugin);
  }

  /** Whether a plugin that failed might have provided this client (store, tool prefix): then its absence is no news. */
  mayHaveProvided(kind: 'clients' | 'stores' | 'toolPrefixes', id: string): boolean {
    return this.#failedPlugins.some((plugin) => plugin[kind] === undefined || plugin[kind].includes(id));
  }

  get messages(): readonly string[] {
    return this.#messages;
  }

  get length(): number {
    return this.#messages.length;
  }
}
