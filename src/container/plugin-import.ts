import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isBareSpecifier, resolvePackageFrom, splitSpecifier } from './package-resolution.js';

/**
 * Imports a plugin module. A path is relative to the config file's folder; a package name is
 * resolved from there too (the app's node_modules, as an import written in that folder would),
 * and only when no such package is there, from where Skein is installed.
 */
export async function importPlugin(specifier: string, baseDir: string): Promise<Record<string, unknown>> {
  if (!isBareSpecifier(specifier)) {
    const url = /^[a-zA-Z][a-zA-Z\d+.-]*:/.test(specifier) && !path.isAbsolute(specifier) ? specifier : pathToFileURL(path.resolve(baseDir, specifier)).href;
    return (await import(url)) as Record<string, unknown>;
  }
  if (specifier === 'skein' || specifier.startsWith('skein/')) return (await import(specifier)) as Record<string, unknown>;
  const file = resolvePackageFrom(specifier, baseDir);
  if (file) return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const { name } = splitSpecifier(specifier);
  try {
    return (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND' || !String((error as Error).message).includes(`'${name}'`)) throw error;
    throw new Error(
      `no package "${name}" in node_modules of ${baseDir} (the config file's folder) or any folder above it, nor where Skein is installed. Install it in your app (npm install ${name}) or give a path.`,
      { cause: error },
    );
  }
}
