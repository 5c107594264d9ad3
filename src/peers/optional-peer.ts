import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { types } from 'node:util';
import { ConfigurationError } from '../errors/skein-error.js';

const requireHere = createRequire(import.meta.url);

/**
 * Checks that the optional peer dependencies of an entry point are installed, so importing, say,
 * `skein/store-redis` without `ioredis` fails at once with a `ConfigurationError` that names every
 * missing package and the `npm install` line, instead of `ERR_MODULE_NOT_FOUND` from deep inside.
 * Each entry point imports its check first; the check resolves from this package's folder, as the
 * entry point's own imports would.
 *
 * ```ts
 * requirePeers('skein/a2a', ['@a2a-js/sdk', 'express']);
 * ```
 */
export function requirePeers(entryPoint: string, packages: readonly string[]): void {
  const missing = packages.filter((name) => !isInstalled(name));
  if (missing.length > 0) throw missingPeersError(entryPoint, missing);
}

/**
 * Loads an optional peer (a package or one of its subpaths) the way `import` would — the same
 * file, the same module instance an app importing it gets — but at run time, so a module that
 * uses a peer does not link it statically (a static import of a missing package fails before any
 * check can run). ES modules come back as their namespace; CommonJS modules as the namespace
 * `import` builds (`default` is `module.exports`, beside its named exports).
 *
 * ```ts
 * import type * as IORedis from 'ioredis';
 * export const { Redis } = loadPeer<typeof IORedis>('skein/store-redis', 'ioredis');
 * ```
 */
export function loadPeer<T>(entryPoint: string, specifier: string): T {
  let url: string;
  try {
    url = import.meta.resolve(specifier);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') throw missingPeersError(entryPoint, [packageName(specifier)]);
    throw error;
  }
  const loaded: unknown = requireHere(fileURLToPath(url));
  if (types.isModuleNamespaceObject(loaded)) return loaded as T;
  return { ...(loaded as object), default: loaded } as T;
}

/** `@scope/name/sub/path` -> `@scope/name`; `name/sub` -> `name`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function isInstalled(name: string): boolean {
  try {
    // The package's manifest, not its main file: a package that resolves is installed even if
    // its "exports" hide package.json, so fall back to resolving the package itself.
    requireHere.resolve(`${name}/package.json`);
    return true;
  } catch {
    try {
      import.meta.resolve(name);
      return true;
    } catch {
      return false;
    }
  }
}

function missingPeersError(entryPoint: string, missing: readonly string[]): ConfigurationError {
  const one = missing.length === 1;
  const list = missing.map((name) => `"${name}"`).join(' and ');
  return new ConfigurationError(
    `${entryPoint} needs the ${one ? 'package' : 'packages'} ${list}, which ${one ? 'is' : 'are'} not installed ` +
      `(skein lists ${one ? 'it as an optional peer dependency' : 'them as optional peer dependencies'}). ` +
      `Install ${one ? 'it' : 'them'}: npm install ${missing.join(' ')}`,
  );
}
