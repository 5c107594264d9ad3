import type { AgentCard, SecurityScheme } from '@a2a-js/sdk';
import { AuthenticationError, ConfigurationError } from 'skein';
import { A2A_PROVIDER_ID } from './a2a-errors.js';

/**
 * What the remote agent card asks for, handed to `A2ACredentials.token`:
 *  - `bearer`: an HTTP bearer scheme, or an OpenID Connect scheme (send an ID/access token);
 *  - `apiKey`: a key sent in the header (or query parameter) the card names;
 *  - `oauth2`: an OAuth 2 scheme; `tokenUrl` and `scopes` come from its client-credentials flow
 *    (see `clientCredentialsToken` for a ready-made token function).
 */
export type A2ACredentialRequest =
  | { kind: 'bearer'; schemeName: string; bearerFormat: string | undefined; scopes: string[] }
  | { kind: 'apiKey'; schemeName: string; name: string; location: 'header' | 'query' | 'cookie'; scopes: string[] }
  | { kind: 'oauth2'; schemeName: string; tokenUrl: string | undefined; scopes: string[] };

/**
 * How an A2AAgent authenticates. Both hooks are called for every HTTP request (card, send,
 * stream, poll, cancel), so a token can rotate; cache in your hook if fetching one is costly.
 */
export interface A2ACredentials {
  /** Headers of your own for every request, e.g. `{ Authorization: 'Bearer …' }` for a remote without a card scheme. */
  headers?: (request: { url: string }) => Record<string, string> | Promise<Record<string, string>>;
  /**
   * The secret for one security scheme the card requires (bearer token, API key, OAuth access
   * token, without any `Bearer ` prefix). Return `undefined` for a scheme you have nothing for:
   * the next alternative the card lists is tried.
   */
  token?: (request: A2ACredentialRequest) => string | undefined | Promise<string | undefined>;
}

/** Headers (and query parameters, for API keys in the query) answering the card's requirements. */
export interface A2AAuthMaterial {
  headers: Record<string, string>;
  query: Record<string, string>;
}

const NONE: A2AAuthMaterial = { headers: {}, query: {} };

/**
 * Answers the card's `securityRequirements` (alternatives, each a set of schemes all needed) with
 * the first alternative the token function can satisfy completely. A card without requirements,
 * or credentials without `token`, needs nothing here. An alternative listing a scheme the card
 * does not define, or mutual TLS, is skipped.
 */
export async function answerSecurity(card: AgentCard, credentials: A2ACredentials | undefined): Promise<A2AAuthMaterial> {
  const requirements = card.securityRequirements ?? [];
  if (requirements.length === 0 || !credentials?.token) return NONE;
  for (const requirement of requirements) {
    const material: A2AAuthMaterial = { headers: {}, query: {} };
    let complete = true;
    for (const [schemeName, scopes] of Object.entries(requirement.schemes ?? {})) {
      const request = credentialRequest(schemeName, card.securitySchemes?.[schemeName], scopes?.list ?? []);
      const secret = request && (await credentials.token(request));
      if (!request || secret === undefined || secret === '') {
        complete = false;
        break;
      }
      apply(material, request, secret);
    }
    if (complete) return material;
  }
  throw new AuthenticationError(
    A2A_PROVIDER_ID,
    `The remote A2A agent "${card.name}" requires one of these credential sets: ${describeRequirements(card)}; the credentials' token function answered none of them completely. Return a secret for each scheme of one set.`,
  );
}

export function describeRequirements(card: AgentCard): string {
  return (card.securityRequirements ?? [])
    .map((r) => Object.keys(r.schemes ?? {}).map((name) => `${name} (${schemeKind(card.securitySchemes?.[name])})`).join(' + '))
    .join(' or ');
}

function schemeKind(scheme: SecurityScheme | undefined): string {
  switch (scheme?.scheme?.$case) {
    case 'apiKeySecurityScheme':
      return `API key in ${scheme.scheme.value.location} "${scheme.scheme.value.name}"`;
    case 'httpAuthSecurityScheme':
      return `HTTP ${scheme.scheme.value.scheme}`;
    case 'oauth2SecurityScheme':
      return 'OAuth 2';
    case 'openIdConnectSecurityScheme':
      return 'OpenID Connect';
    case 'mtlsSecurityScheme':
      return 'mutual TLS';
    default:
      return 'undefined scheme';
  }
}

function credentialRequest(schemeName: string, scheme: SecurityScheme | undefined, scopes: string[]): A2ACredentialRequest | undefined {
  const s = scheme?.scheme;
  switch (s?.$case) {
    case 'httpAuthSecurityScheme':
      // Only bearer is a token this client can send; basic and others are left to `headers`.
      return s.value.scheme.toLowerCase() === 'bearer' ? { kind: 'bearer', schemeName, bearerFormat: s.value.bearerFormat || undefined, scopes } : undefined;
    case 'openIdConnectSecurityScheme':
      return { kind: 'bearer', schemeName, bearerFormat: 'JWT', scopes };
    case 'apiKeySecurityScheme': {
      const location = s.value.location.toLowerCase();
      if (location !== 'header' && location !== 'query' && location !== 'cookie') return undefined;
      return { kind: 'apiKey', schemeName, name: s.value.name, location, scopes };
    }
    case 'oauth2SecurityScheme': {
      const flow = s.value.flows?.flow;
      const tokenUrl = flow?.$case === 'clientCredentials' ? flow.value.tokenUrl : undefined;
      return { kind: 'oauth2', schemeName, tokenUrl, scopes };
    }
    default:
      return undefined;
  }
}

function apply(material: A2AAuthMaterial, request: A2ACredentialRequest, secret: string): void {
  if (request.kind !== 'apiKey') {
    material.headers.Authorization = `Bearer ${secret}`;
  } else if (request.location === 'header') {
    material.headers[request.name] = secret;
  } else if (request.location === 'query') {
    material.query[request.name] = secret;
  } else {
    const cookie = `${request.name}=${encodeURIComponent(secret)}`;
    material.headers.Cookie = material.headers.Cookie ? `${material.headers.Cookie}; ${cookie}` : cookie;
  }
}

export interface ClientCredentialsOptions {
  clientId: string;
  clientSecret: string;
  /** The token endpoint; the card's client-credentials `tokenUrl` by default. */
  tokenUrl?: string;
  /** `fetch` for the token request (proxies, tests). */
  fetch?: typeof fetch;
}

/**
 * A `token` function for OAuth 2 client credentials: it asks the token endpoint for an access
 * token (HTTP basic client authentication, the scopes the card requires) and reuses it until a
 * minute before it expires. Bearer and API-key schemes get `undefined` (not answered).
 *
 * @example
 * const remote = new A2AAgent({ url, credentials: { token: clientCredentialsToken({ clientId: 'app', clientSecret }) } });
 */
export function clientCredentialsToken(options: ClientCredentialsOptions): (request: A2ACredentialRequest) => Promise<string | undefined> {
  if (!options?.clientId || !options.clientSecret) throw new ConfigurationError('clientCredentialsToken needs { clientId, clientSecret }.');
  const cache = new Map<string, { token: string; expiresAt: number }>();
  return async (request) => {
    if (request.kind !== 'oauth2') return undefined;
    const tokenUrl = options.tokenUrl ?? request.tokenUrl;
    if (!tokenUrl) {
      throw new ConfigurationError(`The A2A card's OAuth scheme "${request.schemeName}" has no client-credentials token URL; pass clientCredentialsToken({ tokenUrl }).`);
    }
    const key = `${tokenUrl} ${request.scopes.join(' ')}`;
    const cached = cache.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.token;
    const body = new URLSearchParams({ grant_type: 'client_credentials' });
    if (request.scopes.length > 0) body.set('scope', request.scopes.join(' '));
    const basic = Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64');
    const response = await (options.fetch ?? fetch)(tokenUrl, {
      method: 'POST',
      headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body,
    });
    const text = await response.text();
    const json = parseJson(text) as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (!response.ok || typeof json?.access_token !== 'string') {
      throw new AuthenticationError(
        A2A_PROVIDER_ID,
        `The OAuth token endpoint ${tokenUrl} refused the client credentials (HTTP ${response.status}: ${text.slice(0, 200)}). Check clientId, clientSecret and the scopes ${JSON.stringify(request.scopes)}.`,
        { status: response.status },
      );
    }
    const lifetime = typeof json.expires_in === 'number' ? json.expires_in : 300;
    cache.set(key, { token: json.access_token, expiresAt: Date.now() + Math.max(0, lifetime - 60) * 1000 });
    return json.access_token;
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
