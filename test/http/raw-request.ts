import { request as httpRequest } from 'node:http';

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface RawRequest {
  method?: string;
  path: string;
  /** Any headers, `host` included (fetch cannot set Host). */
  headers?: Record<string, string>;
  body?: string;
}

/**
 * One HTTP request with exactly the headers given: what a page on a rebound domain, or a form on
 * another site, makes the browser send to a local server.
 */
export function rawRequest(url: string, options: RawRequest): Promise<RawReply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, method: options.method ?? 'GET', path: options.path, headers: options.headers, setHost: !options.headers?.host },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Names of the CORS headers in a reply (there should be none). */
export function corsHeaders(headers: Record<string, unknown>): string[] {
  return Object.keys(headers).filter((name) => name.toLowerCase().startsWith('access-control-'));
}
