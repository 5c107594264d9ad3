import type { RouteReply, RouteRequest } from './router.js';

/** How one list endpoint pages, where it differs from the usual (OpenAI API reference, each list). */
export interface ListPaging {
  /** `order` when the request names none. Default `desc` (newest first). */
  defaultOrder?: 'asc' | 'desc';
  /** `limit` when the request names none. Default 20. */
  defaultLimit?: number;
  /** The largest `limit` taken (the smallest is 1). Default 100. */
  maxLimit?: number;
  /** Whether the list takes a `before` cursor. Default true (`GET /files` takes `after` only: it is ignored there). */
  before?: boolean;
}

/** A page of a list, as every OpenAI-style list endpoint answers it (with `object: "list"`). */
export interface ListPageBody<T> {
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** A list query the endpoint refuses (a 400 naming the parameter). */
class ListQueryError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

/**
 * Answers a list request with one cursor page of `items` (kept oldest first), as the OpenAI list
 * endpoints page (Assistants, threads, messages, runs, run steps, files, vector stores, response
 * input items, conversation items, stored completions; Foundry Agents the same): `order`,
 * `limit` (1..max; anything else is a 400), `after` / `before` (an item id of the list: the items
 * that follow it / the page just before it, in that order), `first_id`, `last_id` and `has_more`
 * (more items past this page in the direction it was read).
 */
export function listPage<T extends { id?: unknown }>(items: readonly T[], request: RouteRequest, reply: RouteReply, paging: ListPaging = {}): void {
  try {
    reply.json(200, { object: 'list', ...pageOf(items, request.query, paging) });
  } catch (error) {
    if (!(error instanceof ListQueryError)) throw error;
    reply.error(400, error.message, { param: error.param });
  }
}

function pageOf<T extends { id?: unknown }>(items: readonly T[], query: Record<string, string>, paging: ListPaging): ListPageBody<T> {
  const { defaultOrder = 'desc', defaultLimit = 20, maxLimit = 100 } = paging;
  const order = query.order ?? defaultOrder;
  if (order !== 'asc' && order !== 'desc') throw new ListQueryError(`Invalid 'order': expected 'asc' or 'desc', got ${JSON.stringify(order)}.`, 'order');
  const limit = query.limit === undefined ? defaultLimit : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
    throw new ListQueryError(`Invalid 'limit': expected an integer from 1 to ${maxLimit}, got ${JSON.stringify(query.limit)}.`, 'limit');
  }
  const before = paging.before === false ? undefined : query.before;
  const ordered = order === 'asc' ? [...items] : [...items].reverse();
  const at = (param: 'after' | 'before', id: string) => {
    const index = ordered.findIndex((item) => item.id === id);
    if (index < 0) throw new ListQueryError(`No item with id '${id}' in this list to page ${param}.`, param);
    return index;
  };
  const from = query.after === undefined ? 0 : at('after', query.after) + 1;
  const window = ordered.slice(from, before === undefined ? undefined : Math.max(from, at('before', before)));
  // Before a cursor (the previous page), the page is the `limit` items nearest to it.
  const data = before !== undefined && query.after === undefined ? window.slice(-limit) : window.slice(0, limit);
  return { data, first_id: idOf(data[0]), last_id: idOf(data.at(-1)), has_more: window.length > data.length };
}

function idOf(item: { id?: unknown } | undefined): string | null {
  return typeof item?.id === 'string' ? item.id : null;
}
