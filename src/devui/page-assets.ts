import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { sendText } from './devui-http.js';
import { FAVICON_SVG } from './page/favicon.js';
import { PAGE_CSS } from './page/page-css.js';
import { PAGE_HTML } from './page/page-html.js';

/**
 * The page's script modules (compiled with the package, no bundler): the entry at /app.js, and each
 * module it imports by its file name, which is where the browser resolves `./name.js` from /app.js.
 */
const PAGE_MODULES = ['agent-picker', 'api-client', 'approval-view', 'dom', 'format', 'markdown', 'message-view', 'page-state', 'thread-import', 'thread-list', 'tool-runner', 'trace-view'];
const PAGE_SCRIPTS = new Map([
  ['/app.js', new URL('./page/devui-client.js', import.meta.url)],
  ...PAGE_MODULES.map((name) => [`/${name}.js`, new URL(`./page/${name}.js`, import.meta.url)] as const),
]);

/** Serves the page, its styles, icon and scripts (no token needed: they hold no data); false for any other address. */
export async function servePageAsset(res: ServerResponse, method: string, pathname: string): Promise<boolean> {
  if (method !== 'GET') return false;
  if (pathname === '/') sendText(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
  else if (pathname === '/favicon.svg' || pathname === '/favicon.ico') sendText(res, 200, 'image/svg+xml', FAVICON_SVG);
  else if (pathname === '/app.css') sendText(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
  else {
    const script = PAGE_SCRIPTS.get(pathname);
    if (!script) return false;
    sendText(res, 200, 'text/javascript; charset=utf-8', await readFile(script, 'utf8'));
  }
  return true;
}
