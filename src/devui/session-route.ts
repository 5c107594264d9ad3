import type { AccessToken } from '../http/access-token.js';
import { RequestRefusedError } from '../http/local-request-guard.js';
import { readJsonObject } from './devui-http.js';
import { reply, type Route } from './devui-router.js';

/**
 * `POST /api/session`: the page trades the token of the printed address for an HttpOnly,
 * SameSite=Strict cookie, so the token leaves the address bar and no script (and no other site)
 * can read or send it.
 */
export function sessionRoute(token: AccessToken | undefined, url: string): Route {
  return {
    method: 'POST',
    path: '/api/session',
    public: true,
    handle: async ({ req, res }) => {
      const body = await readJsonObject(req);
      if (!token) return reply(200, { session: 'no-token' });
      if (!token.matches(body.token)) {
        throw new RequestRefusedError(401, 'token', `This address's token is not the Dev UI's: it makes a new one at each start. Open the address it printed last (${url}/?token=...).`);
      }
      res.setHeader('set-cookie', token.cookie());
      return reply(200, { session: 'started' });
    },
  };
}
