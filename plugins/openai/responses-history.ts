import OpenAI from 'openai';
import { type AIContent, type ChatMessage, type ChatRole, ForkUnsupportedError } from 'skein';
import { RESPONSES_ITEM_ID, contentsOfItem, toResponsesInput } from './responses-mapping.js';

/** An item as the service lists it (input items, output items, conversation items): the fields read here. */
interface ListedItem {
  id?: string;
  type: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: unknown;
}

/** A Responses service thread's history: its messages and, for a chain, where each response ends. */
export interface ResponsesHistory {
  messages: ChatMessage[];
  /** `previous_response_id` chains: after how many messages each response ends (oldest first), and its id. */
  responseEnds?: { count: number; responseId: string }[];
}

/**
 * Service items -> Skein messages, the way a run records them: consecutive output items (text
 * and function calls) are one assistant message, consecutive function outputs one tool message.
 */
export function messagesFromItems(items: readonly ListedItem[], assistantMessageId?: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const append = (role: ChatRole, contents: AIContent[], id: string | undefined) => {
    if (contents.length === 0) return;
    const last = messages.at(-1);
    if (last && last.role === role && (role === 'assistant' || role === 'tool')) last.contents.push(...contents);
    else messages.push({ role, contents, ...(id !== undefined ? { messageId: id } : {}) });
  };
  for (const item of items) {
    if (item.type === 'message') {
      const role: ChatRole = item.role === 'assistant' ? 'assistant' : item.role === 'system' || item.role === 'developer' ? 'system' : 'user';
      append(role, contentsOfMessage(item.content), role === 'assistant' ? (assistantMessageId ?? item.id) : item.id);
    } else if (item.type === 'function_call' || item.type === 'mcp_call' || item.type === 'mcp_list_tools' || item.type === 'mcp_approval_request') {
      // What the model did (a hosted MCP server's listing, call and approval request included), as a run records it.
      append('assistant', contentsOfItem(item as unknown as OpenAI.Responses.ResponseOutputItem), assistantMessageId ?? item.id);
    } else if (item.type === 'mcp_approval_response') {
      const answer = item as unknown as OpenAI.Responses.ResponseInputItem.McpApprovalResponse;
      append('user', [{ kind: 'function-approval-response', callId: answer.approval_request_id, approved: answer.approve, ...(answer.reason ? { reason: answer.reason } : {}) }], item.id);
    } else if (item.type === 'function_call_output') {
      append('tool', [{ kind: 'function-result', callId: item.call_id ?? '', result: outputText(item.output) }], undefined);
    }
  }
  return messages;
}

function contentsOfMessage(content: unknown): AIContent[] {
  if (typeof content === 'string') return content ? [{ kind: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  const out: AIContent[] = [];
  for (const part of content as { type?: string; text?: string; refusal?: string; image_url?: string }[]) {
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') out.push({ kind: 'text', text: part.text });
    else if (part.type === 'refusal' && typeof part.refusal === 'string') out.push({ kind: 'error', message: part.refusal, code: 'refusal' });
    else if (part.type === 'input_image' && typeof part.image_url === 'string') out.push({ kind: 'uri', uri: part.image_url, mediaType: 'image/*' });
  }
  return out;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  return JSON.stringify(output ?? '');
}

/** Every item of a conversation, oldest first (all pages). */
export async function conversationItems(client: OpenAI, conversationId: string, signal?: AbortSignal): Promise<ListedItem[]> {
  const items: ListedItem[] = [];
  for await (const item of client.conversations.items.list(conversationId, { order: 'asc', limit: 100 }, { signal })) items.push(item as ListedItem);
  return items;
}

/** Items per page when reading: the most a list endpoint gives (1..100), so a chain takes few requests. */
const PAGE_LIMIT = 100;

/** Every input item of a response, oldest first (all pages). */
async function inputItemsOf(client: OpenAI, responseId: string, signal: AbortSignal | undefined, limit: number): Promise<ListedItem[]> {
  const items: ListedItem[] = [];
  for await (const item of client.responses.inputItems.list(responseId, { order: 'asc', limit }, { signal })) items.push(item as ListedItem);
  return items;
}

/** A response of the chain as read: its id and its output items (undefined when it was deleted). */
interface ChainLink {
  responseId: string;
  output?: readonly ListedItem[];
}

/**
 * A `previous_response_id` chain, oldest first, whichever way the server lists `input_items`.
 *
 * The service lists a continuing response's whole context (earlier inputs AND outputs, each
 * with the id it was first stored under, then the new input); some compatible servers list only
 * the request's own input. So the newest response's list (every page) plus its output is read
 * first, and items are recognised by id: walking back, a response whose output is already among
 * the items read needs no list of its own (with the service, none does); only one whose output
 * is missing has its own list read, and what it adds goes before everything read so far. Each
 * response is retrieved (one small request) for its output ids and its predecessor; that is
 * also where each response ends, so a reply keeps its response id (as a run records it) and a
 * fork can continue from any response's end. A predecessor that is gone (deleted with the
 * thread a fork came from) ends the walk: what the lists already hold is the history (all of it
 * with the service; on a server that lists only each request's input, the part held by the
 * deleted responses is gone with them).
 */
export async function readResponseChain(
  client: OpenAI,
  lastResponseId: string,
  signal?: AbortSignal,
  options: { pageLimit?: number } = {},
): Promise<ResponsesHistory> {
  const limit = options.pageLimit ?? PAGE_LIMIT;
  const last: OpenAI.Responses.Response = await client.responses.retrieve(lastResponseId, {}, { signal });
  let items: ListedItem[] = [...(await inputItemsOf(client, last.id, signal, limit)), ...(last.output as ListedItem[])];
  const seen = new Set(idsOf(items));
  const chain: ChainLink[] = [{ responseId: last.id, output: last.output as ListedItem[] }];
  for (let id = last.previous_response_id; id; ) {
    const response = await retrieveIfStored(client, id, signal);
    if (!response) {
      chain.unshift({ responseId: id });
      break;
    }
    const output = response.output as ListedItem[];
    chain.unshift({ responseId: response.id, output });
    if (!output.some((i) => i.id !== undefined && seen.has(i.id))) {
      // This server listed only the later request's own input: this response's items go first.
      const earlier = [...(await inputItemsOf(client, response.id, signal, limit)), ...output].filter((i) => i.id === undefined || !seen.has(i.id));
      for (const item of earlier) if (item.id !== undefined) seen.add(item.id);
      items = [...earlier, ...items];
    }
    id = response.previous_response_id;
  }
  return chainMessages(items, chain);
}

function idsOf(items: readonly ListedItem[]): string[] {
  return items.flatMap((i) => (i.id === undefined ? [] : [i.id]));
}

/** The response, or undefined when the service no longer has it (404). */
async function retrieveIfStored(client: OpenAI, id: string, signal: AbortSignal | undefined): Promise<OpenAI.Responses.Response | undefined> {
  try {
    return await client.responses.retrieve(id, {}, { signal });
  } catch (error) {
    if (error instanceof OpenAI.NotFoundError) return undefined;
    throw error;
  }
}

/**
 * The chain's items as messages, cut where each response's output ends: a response's output
 * items are one assistant message whose id is the response id; where a response ends is known
 * for every response still stored whose output is among the items.
 */
function chainMessages(items: readonly ListedItem[], chain: readonly ChainLink[]): ResponsesHistory {
  const messages: ChatMessage[] = [];
  const responseEnds: { count: number; responseId: string }[] = [];
  const position = new Map(items.flatMap((item, index) => (item.id === undefined ? [] : [[item.id, index] as const])));
  let start = 0;
  for (const link of chain) {
    const outputIds = new Set(idsOf(link.output ?? []));
    const isOutput = (item: ListedItem) => item.id !== undefined && outputIds.has(item.id);
    // A response whose output is not among the items (deleted, or it gave none) has no known end.
    const end = Math.max(0, ...[...outputIds].map((id) => (position.get(id) ?? -1) + 1));
    if (end <= start) continue;
    const segment = items.slice(start, end);
    messages.push(...messagesFromItems(segment.filter((i) => !isOutput(i))), ...messagesFromItems(segment.filter(isOutput), link.responseId));
    responseEnds.push({ count: messages.length, responseId: link.responseId });
    start = end;
  }
  messages.push(...messagesFromItems(items.slice(start)));
  return { messages, responseEnds };
}

/**
 * The response a chain fork holding the first `count` messages continues from. A chain can only
 * continue from the end of a response: a cut just after tool results moves on to the end of the
 * response that answers them; a cut inside user input is refused, naming the cuts that exist.
 */
export function chainForkPoint(provider: string, history: ResponsesHistory, count: number): string {
  const end = history.responseEnds?.find((e) => e.count >= count);
  // A cut after a tool exchange's results (the fork keeps a call with its results) ends where the
  // response answering them ends: what lies between is the model's reply to the results, no user input.
  const afterResults = count > 0 && history.messages[count - 1]!.role === 'tool';
  if (end && (end.count === count || (afterResults && history.messages.slice(count, end.count).every((m) => m.role !== 'user')))) return end.responseId;
  const points = (history.responseEnds ?? []).map((e) => e.count - 1);
  throw new ForkUnsupportedError(
    provider,
    `A Responses thread chained by previous_response_id can be forked only where a response ends (at: ${points.join(', ') || 'none'}), ` +
      `found a cut after message ${count - 1}, inside a response's input. Fork at the message before it (e.g. the previous answer) and send that input again, ` +
      'or use conversation threads (conversation: true), which fork at any message.',
  );
}

/**
 * The first `count` messages as input items for a new conversation: no item ids (they belong to
 * the original). Hosted MCP items are left out: they exist only with their service ids; the
 * model's text keeps what the calls returned, and the service lists the tools again.
 */
export function copiedItems(messages: readonly ChatMessage[]): OpenAI.Responses.ResponseInputItem[] {
  const withoutIds = messages.map((m) => ({
    ...m,
    contents: m.contents.filter((c) => !HOSTED_ONLY.has(c.kind)).map((c) => {
      if (!c.additionalProperties || !(RESPONSES_ITEM_ID in c.additionalProperties)) return c;
      const { [RESPONSES_ITEM_ID]: _id, ...rest } = c.additionalProperties;
      return { ...c, additionalProperties: rest };
    }),
  }));
  return toResponsesInput(withoutIds);
}

/** Contents that name items of the original by their service ids (a hosted MCP server's). */
const HOSTED_ONLY = new Set(['hosted-mcp-call', 'hosted-mcp-tools', 'function-approval-request', 'function-approval-response']);

/** Items per create call: the Conversations API takes at most 20 at a time. */
const ITEMS_PER_CALL = 20;

/** A new conversation holding `items`, in order; deleted again if copying fails part way. */
export async function conversationWithItems(client: OpenAI, items: readonly OpenAI.Responses.ResponseInputItem[], signal?: AbortSignal): Promise<string> {
  const created = await client.conversations.create({ items: items.slice(0, ITEMS_PER_CALL) as OpenAI.Conversations.ConversationCreateParams['items'] }, { signal });
  try {
    for (let i = ITEMS_PER_CALL; i < items.length; i += ITEMS_PER_CALL) {
      await client.conversations.items.create(created.id, { items: items.slice(i, i + ITEMS_PER_CALL) as OpenAI.Conversations.ItemCreateParams['items'] }, { signal });
    }
  } catch (error) {
    await client.conversations.delete(created.id).catch(() => {
      // Best effort: a half-copied conversation no thread refers to.
    });
    throw error;
  }
  return created.id;
}
