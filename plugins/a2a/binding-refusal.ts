import type { IncomingMessage, ServerResponse } from 'node:http';
import { type RequestRefusedError, sendRefusal } from 'skein';
import { ContentTypeNotSupportedError, restStatusFor, toJsonRpcError, toRestErrorBody } from './a2a-peers.js';

/** Where the A2A bindings are mounted, to answer a refusal in the binding's own error format. */
export interface BindingPaths {
  jsonRpc: string;
  rest: string;
}

/**
 * Answers a request the shared guard refused. A body of the wrong content type on an A2A binding
 * is the protocol's `ContentTypeNotSupportedError`, in that binding's error format, so A2A clients
 * (and the A2A TCK) read it as one: on JSON-RPC a JSON-RPC error envelope (code -32005, `id` null:
 * the body was not read), HTTP 200 as the SDK's own JSON-RPC handler answers it; on HTTP+JSON an
 * AIP-193 body (`{error: {code, status, message, details}}`) with the SDK's status for that error
 * (400, A2A 1.0.1's table, which the SDK's REST handler uses for every other error too). Both carry
 * the `google.rpc.ErrorInfo` (reason `CONTENT_TYPE_NOT_SUPPORTED`). Anything else keeps the guard's
 * own answer (403 for a Host or Origin, `{error: {name, message}}`).
 */
export function sendBindingRefusal(req: IncomingMessage, res: ServerResponse, refusal: RequestRefusedError, paths: BindingPaths): void {
  const binding = refusal.reason === 'content-type' ? bindingOf(req.url ?? '', paths) : undefined;
  if (!binding) return sendRefusal(res, refusal);
  const error = new ContentTypeNotSupportedError(refusal.message);
  const [status, body] = binding === 'jsonrpc' ? [200, { jsonrpc: '2.0', id: null, error: toJsonRpcError(error) }] : [restStatusFor(error), toRestErrorBody(error, restStatusFor(error))];
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(JSON.stringify(body));
}

function bindingOf(url: string, paths: BindingPaths): 'jsonrpc' | 'rest' | undefined {
  const path = url.split('?')[0]!;
  const under = (base: string) => path === base || path.startsWith(`${base}/`);
  if (under(paths.jsonRpc)) return 'jsonrpc';
  if (under(paths.rest)) return 'rest';
  return undefined;
}
