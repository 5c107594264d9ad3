import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

/**
 * Serves npm packages to a page as ES modules without a bundler, so the page can
 * `import { HttpAgent } from '@ag-ui/client'`: a module is read from node_modules and each bare
 * import in it is rewritten to the URL of the file it resolves to, the way a browser bundler
 * would pick it (`browser`, `import`, `module` conditions). For samples and tests; a real app
 * bundles its page.
 */
export class BrowserModules {
  static readonly PREFIX = '/modules/';

  constructor(private readonly root: string) {}

  /** The URL a page imports a bare specifier from. */
  urlOf(specifier: string, fromDir: string = this.root): string {
    return BrowserModules.PREFIX + path.relative(this.root, resolveBrowser(specifier, fromDir)).split(path.sep).join('/');
  }

  /** Answers `GET /modules/...`; returns false for other paths. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.startsWith(BrowserModules.PREFIX)) return false;
    const file = path.resolve(this.root, decodeURIComponent(url.pathname.slice(BrowserModules.PREFIX.length)));
    const inside = file.startsWith(path.join(this.root, 'node_modules') + path.sep);
    // Bundler-style imports leave out the extension (or name a folder): send the browser to the file, so its own imports resolve from there.
    const completed = inside && !existsSync(file) ? ['.js', '.mjs', '/index.js'].map((end) => file + end).find((f) => existsSync(f)) : undefined;
    if (completed) {
      res.writeHead(302, { location: `${url.pathname}${completed.slice(file.length)}` }).end();
      return true;
    }
    if (!inside || !existsSync(file) || !/\.(m?js)$/.test(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return true;
    }
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' });
    res.end(this.rewrite(readFileSync(file, 'utf8'), path.dirname(file)));
    return true;
  }

  /** Rewrites the bare imports of module text found in `dir`. */
  rewrite(source: string, dir: string): string {
    return source.replace(/(\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'./][^"']*)\2/g, (all, lead: string, quote: string, specifier: string) => {
      // Text that only looks like an import (inside a string or a comment) is left alone.
      if (!PACKAGE_SPECIFIER.test(specifier)) return all;
      try {
        return `${lead}${quote}${this.urlOf(specifier, dir)}${quote}`;
      } catch {
        return all;
      }
    });
  }
}

const PACKAGE_SPECIFIER = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w./-]+)?$/;
const CONDITIONS = ['browser', 'import', 'es2015', 'module', 'default'];

/** The file a bare specifier resolves to from `fromDir`, for a browser. */
export function resolveBrowser(specifier: string, fromDir: string): string {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  const subpath = `.${specifier.slice(name.length)}`;
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const pkgDir = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(pkgDir, 'package.json'))) return path.join(pkgDir, entryOf(pkgDir, subpath, specifier));
    if (path.dirname(dir) === dir) throw new Error(`Cannot resolve "${specifier}" from ${fromDir}: install it.`);
  }
}

function entryOf(pkgDir: string, subpath: string, specifier: string): string {
  const pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { exports?: unknown; module?: string; main?: string; browser?: unknown };
  if (pkg.exports !== undefined) {
    const exportsMap = typeof pkg.exports === 'string' || !Object.keys(pkg.exports as object).some((k) => k.startsWith('.')) ? { '.': pkg.exports } : (pkg.exports as Record<string, unknown>);
    const target = pick(exportsMap[subpath]);
    if (target) return target;
    throw new Error(`"${specifier}": ${subpath} is not exported for browsers.`);
  }
  if (subpath !== '.') return existsSync(path.join(pkgDir, subpath)) ? subpath : `${subpath}.js`;
  return pkg.module ?? pkg.main ?? 'index.js';
}

function pick(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (!target || typeof target !== 'object') return undefined;
  for (const [condition, value] of Object.entries(target)) {
    if (!CONDITIONS.includes(condition)) continue;
    const found = pick(value);
    if (found) return found;
  }
  return undefined;
}
