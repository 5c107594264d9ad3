import { registryState } from './registry-state.js';
import { listPage } from './list-page.js';
import { InvalidRequestError, isRecord } from './responses-routes.js';
import type { RouteRegistry, RouteReply, RouteRequest } from './router.js';

/** A completion created with `store: true`, with the messages it was asked with. */
export interface StoredChatCompletion {
  completion: Record<string, unknown> & { id: string; model: string; metadata: Record<string, string> };
  messages: Record<string, unknown>[];
}

/** The stored chat completions of one emulator, by id, oldest first. */
export const storedChatCompletionsOf = registryState(() => new Map<string, StoredChatCompletion>());

/**
 * Stored Chat Completions: GET /v1/chat/completions (`model`, `metadata[key]`, `after`, `limit`,
 * `order` asc by default), GET / POST (metadata) / DELETE /v1/chat/completions/{id}, GET
 * /v1/chat/completions/{id}/messages. Only completions created with `store: true` are listed,
 * as on the service.
 */
export function registerStoredChatCompletionsRoutes(registry: RouteRegistry): void {
  const stored = storedChatCompletionsOf(registry);
  const find = (request: RouteRequest, reply: RouteReply): StoredChatCompletion | undefined => {
    const found = stored.get(request.params.id!);
    if (!found) reply.error(404, `No chat completion found with id '${request.params.id}'. Only completions created with store: true are kept.`, { param: 'completion_id' });
    return found;
  };

  registry.route('GET', '/v1/chat/completions', (request, reply) => {
    const filters = metadataFilters(request.query);
    const matching = [...stored.values()]
      .map((s) => s.completion)
      .filter((c) => request.query.model === undefined || c.model === request.query.model)
      .filter((c) => Object.entries(filters).every(([key, value]) => c.metadata[key] === value));
    listPage(matching, request, reply, { defaultOrder: 'asc' });
  });
  registry.route('GET', '/v1/chat/completions/:id', (request, reply) => {
    const found = find(request, reply);
    if (found) reply.json(200, found.completion);
  });
  registry.route('POST', '/v1/chat/completions/:id', (request, reply) => {
    const found = find(request, reply);
    if (!found) return;
    const body = isRecord(request.body) ? request.body : {};
    try {
      if (body.metadata === undefined) throw new InvalidRequestError('`metadata` is required: only the metadata of a stored completion can be updated.', 'metadata');
      found.completion.metadata = parseMetadata(body.metadata);
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      reply.error(400, error.message, { param: error.param });
      return;
    }
    reply.json(200, found.completion);
  });
  registry.route('DELETE', '/v1/chat/completions/:id', (request, reply) => {
    const found = find(request, reply);
    if (!found) return;
    stored.delete(found.completion.id);
    reply.json(200, { object: 'chat.completion.deleted', id: found.completion.id, deleted: true });
  });
  registry.route('GET', '/v1/chat/completions/:id/messages', (request, reply) => {
    const found = find(request, reply);
    if (!found) return;
    const messages = found.messages.map((message, index) => storedMessage(found.completion.id, index, message));
    listPage(messages, request, reply, { defaultOrder: 'asc' });
  });
}

/** A request message as the service lists it: `<completion id>-<index>`, text content, parts kept. */
function storedMessage(completionId: string, index: number, message: Record<string, unknown>): Record<string, unknown> {
  const parts = Array.isArray(message.content) ? message.content : null;
  const text = parts
    ? parts.map((p) => (isRecord(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('')
    : typeof message.content === 'string'
      ? message.content
      : null;
  return {
    id: `${completionId}-${index}`,
    role: message.role,
    content: text,
    name: typeof message.name === 'string' ? message.name : null,
    content_parts: parts,
    ...(Array.isArray(message.tool_calls) ? { tool_calls: message.tool_calls } : {}),
    ...(typeof message.tool_call_id === 'string' ? { tool_call_id: message.tool_call_id } : {}),
  };
}

/** `metadata[key]=value` query parameters (how the SDK sends a metadata filter). */
function metadataFilters(query: Record<string, string>): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    const name = /^metadata\[(.+)\]$/.exec(key)?.[1];
    if (name !== undefined) filters[name] = value;
  }
  return filters;
}

/** `metadata`: up to 16 string values, as the service checks. */
export function parseMetadata(metadata: unknown, param = 'metadata'): Record<string, string> {
  if (metadata === undefined || metadata === null) return {};
  if (!isRecord(metadata) || Object.keys(metadata).length > 16 || Object.values(metadata).some((v) => typeof v !== 'string')) {
    throw new InvalidRequestError(`\`${param}\` must be an object of at most 16 string values.`, param);
  }
  return metadata as Record<string, string>;
}
