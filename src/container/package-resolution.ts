import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { SkeinError } from '../errors/skein-error.js';

// The conditions Node's ESM loader matches for `import()`; `default` always matches.
const CONDITIONS = new Set(['node', 'import', 'module-sync', 'default']);

/** A package was found but cannot serve the requested (sub)path. */
export class PackageResolutionError extends SkeinError {}

/**
 * Resolves a bare package specifier (`pkg`, `pkg/sub`, `@scope/pkg/sub`) the way Node's ESM loader
 * would for a module in `fromDir`: the nearest `node_modules/<pkg>` in `fromDir` or a folder
 * above it, then the package's `exports` (conditions node, import, default) or `main`. Returns
 * the real path of the file, or `undefined` when no such package folder exists.
 *
 * Node cannot resolve from another folder for us (`import.meta.resolve`'s parent argument is
 * behind a flag), and `require.resolve` would pick `require` entry points.
 */
export function resolvePackageFrom(specifier: string, fromDir: string): string | undefined {
  const { name, subpath } = splitSpecifier(specifier);
  const folder = findPackageFolder(name, fromDir);
  if (!folder) return undefined;
  const manifest = readManifest(folder);
  const target = manifest.exports !== undefined ? exportsTarget(manifest.exports, subpath, specifier) : legacyTarget(folder, manifest.main, subpath);
  const file = path.resolve(folder, target);
  if (!existsSync(file)) throw new PackageResolutionError(`"${specifier}" resolves to ${file}, which does not exist (is the package built?).`);
  return realpathSync(file);
}

/** True for `pkg`, `@scope/pkg/sub`; false for paths and URLs (`./x.js`, `/abs`, `file:...`, `node:...`). */
export function isBareSpecifier(specifier: string): boolean {
  return !specifier.startsWith('.') && !path.isAbsolute(specifier) && !/^[a-zA-Z][a-zA-Z\d+.-]*:/.test(specifier);
}

/** The package a bare specifier names (`@scope/pkg` of `@scope/pkg/sub`) and the subpath within it. */
export function splitSpecifier(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split('/');
  const length = specifier.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, length).join('/');
  const rest = parts.slice(length).join('/');
  return { name, subpath: rest ? `./${rest}` : '.' };
}

function findPackageFolder(name: string, fromDir: string): string | undefined {
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== 'node_modules') {
      const candidate = path.join(dir, 'node_modules', name);
      if (isDirectory(candidate)) return candidate;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

function readManifest(folder: string): { exports?: unknown; main?: unknown } {
  const file = path.join(folder, 'package.json');
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { exports?: unknown; main?: unknown };
  } catch (error) {
    throw new PackageResolutionError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

/** `exports` as Node reads it: one target for ".", or a map of subpaths (with `*` patterns). */
function exportsTarget(exports: unknown, subpath: string, specifier: string): string {
  const map = isSubpathMap(exports) ? (exports as Record<string, unknown>) : { '.': exports };
  let found: string | undefined;
  if (Object.hasOwn(map, subpath) && !subpath.includes('*')) {
    found = conditionalTarget(map[subpath], undefined);
  } else {
    const pattern = bestPattern(Object.keys(map), subpath);
    if (pattern) found = conditionalTarget(map[pattern.key], pattern.match);
  }
  if (found === undefined) {
    throw new PackageResolutionError(`"${specifier}": the package's "exports" has no entry for "${subpath}" under the conditions ${[...CONDITIONS].join(', ')}.`);
  }
  return found;
}

function isSubpathMap(exports: unknown): boolean {
  return !!exports && typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'));
}

/** The `"./x/*"` key matching `subpath` with the longest prefix (Node's pattern order). */
function bestPattern(keys: readonly string[], subpath: string): { key: string; match: string } | undefined {
  let best: { key: string; match: string } | undefined;
  for (const key of keys) {
    const star = key.indexOf('*');
    if (star < 0 || key.indexOf('*', star + 1) >= 0) continue;
    const prefix = key.slice(0, star);
    const suffix = key.slice(star + 1);
    if (!subpath.startsWith(prefix) || subpath.length < key.length || !subpath.endsWith(suffix)) continue;
    if (!best || prefix.length > best.key.indexOf('*')) best = { key, match: subpath.slice(prefix.length, subpath.length - suffix.length) };
  }
  return best;
}

/** A target string, the first usable entry of an array, or the first matching condition of an object. */
function conditionalTarget(target: unknown, match: string | undefined): string | undefined {
  if (typeof target === 'string') {
    if (!target.startsWith('./')) return undefined;
    return match === undefined ? target : target.replaceAll('*', match);
  }
  if (Array.isArray(target)) {
    for (const entry of target) {
      const found = conditionalTarget(entry, match);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (target && typeof target === 'object') {
    for (const [condition, value] of Object.entries(target)) {
      if (!CONDITIONS.has(condition)) continue;
      const found = conditionalTarget(value, match);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** No `exports`: a subpath is a file in the package; the package itself is `main` (or index.js), as Node's legacy lookup tries it. */
function legacyTarget(folder: string, main: unknown, subpath: string): string {
  if (subpath !== '.') return subpath;
  const candidates = typeof main === 'string' && main ? [main, `${main}.js`, `${main}.json`, path.join(main, 'index.js')] : [];
  return candidates.find((c) => statSafe(path.resolve(folder, c))) ?? 'index.js';
}

function statSafe(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
