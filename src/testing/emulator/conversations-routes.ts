import {
  InvalidRequestError,
  isRecord,
  parseInput,
  resolveItemReferences,
  responsesStateOf,
  type StoredConversation,
} from './responses-routes.js';
import { listPage } from './list-page.js';
import type { RouteReply, RouteRegistry, RouteRequest } from './router.js';

/**
 * OpenAI Conversations: POST /v1/conversations, GET / POST (metadata) / DELETE
 * /v1/conversations/{id}, GET / POST /v1/conversations/{id}/items, GET / DELETE
 * /v1/conversations/{id}/items/{itemId}. Shares its state with the Responses routes, which
 * read and append a conversation's items.
 */
export function registerConversationsRoutes(registry: RouteRegistry): void {
  const state = responsesStateOf(registry);
  const find = (request: RouteRequest, reply: RouteReply): StoredConversation | undefined => {
    const conversation = state.conversations.get(request.params.id!);
    if (!conversation) reply.error(404, `Conversation with id '${request.params.id}' not found.`, { param: 'conversation_id' });
    return conversation;
  };
  const view = (c: StoredConversation) => ({ id: c.id, object: 'conversation', created_at: c.created_at, metadata: c.metadata });

  registry.route('POST', '/v1/conversations', (request, reply, context) => {
    const body: Record<string, unknown> = isRecord(request.body) ? request.body : {};
    try {
      const items = body.items === undefined || body.items === null ? [] : resolveItemReferences(state, parseInput(body.items, context.ids, 'items'));
      const conversation: StoredConversation = {
        id: context.ids.next('conv_'),
        created_at: Math.floor(Date.now() / 1000),
        metadata: isRecord(body.metadata) ? body.metadata : {},
        items,
      };
      state.conversations.set(conversation.id, conversation);
      reply.json(200, view(conversation));
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      reply.error(error.status, error.message, { param: error.param });
    }
  });
  registry.route('GET', '/v1/conversations/:id', (request, reply) => {
    const conversation = find(request, reply);
    if (conversation) reply.json(200, view(conversation));
  });
  registry.route('POST', '/v1/conversations/:id', (request, reply) => {
    const conversation = find(request, reply);
    if (!conversation) return;
    if (!isRecord(request.body) || !isRecord(request.body.metadata)) {
      reply.error(400, '`metadata` is required and must be an object.', { param: 'metadata' });
      return;
    }
    conversation.metadata = request.body.metadata;
    reply.json(200, view(conversation));
  });
  registry.route('DELETE', '/v1/conversations/:id', (request, reply) => {
    const conversation = find(request, reply);
    if (!conversation) return;
    state.conversations.delete(conversation.id);
    reply.json(200, { id: conversation.id, object: 'conversation.deleted', deleted: true });
  });
  registry.route('GET', '/v1/conversations/:id/items', (request, reply) => {
    const conversation = find(request, reply);
    if (conversation) listPage(conversation.items, request, reply);
  });
  registry.route('POST', '/v1/conversations/:id/items', (request, reply, context) => {
    const conversation = find(request, reply);
    if (!conversation) return;
    try {
      const body: Record<string, unknown> = isRecord(request.body) ? request.body : {};
      if (!Array.isArray(body.items)) throw new InvalidRequestError('`items` is required and must be an array.', 'items');
      const added = resolveItemReferences(state, parseInput(body.items, context.ids, 'items'));
      conversation.items.push(...added);
      reply.json(200, { object: 'list', data: added, first_id: added[0]?.id ?? null, last_id: added.at(-1)?.id ?? null, has_more: false });
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      reply.error(error.status, error.message, { param: error.param });
    }
  });
  registry.route('GET', '/v1/conversations/:id/items/:itemId', (request, reply) => {
    const conversation = find(request, reply);
    if (!conversation) return;
    const item = conversation.items.find((i) => i.id === request.params.itemId);
    if (!item) reply.error(404, `Item with id '${request.params.itemId}' not found.`, { param: 'item_id' });
    else reply.json(200, item);
  });
  registry.route('DELETE', '/v1/conversations/:id/items/:itemId', (request, reply) => {
    const conversation = find(request, reply);
    if (!conversation) return;
    const index = conversation.items.findIndex((i) => i.id === request.params.itemId);
    if (index < 0) {
      reply.error(404, `Item with id '${request.params.itemId}' not found.`, { param: 'item_id' });
      return;
    }
    conversation.items.splice(index, 1);
    reply.json(200, view(conversation));
  });
}
