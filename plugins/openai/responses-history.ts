import type OpenAI from 'openai';
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

/**
 * A `previous_response_id` chain, oldest response first: each response's input items then its
 * output (one assistant message, id = the response id, as a run records it).
 */
export async function readResponseChain(client: OpenAI, lastResponseId: string, signal?: AbortSignal): Promise<ResponsesHistory> {
  const segments: { responseId: string; messages: ChatMessage[] }[] = [];
  for (let id: string | null | undefined = lastResponseId; id; ) {
    const response: OpenAI.Responses.Response = await client.responses.retrieve(id, {}, { signal });
    const inputs: ListedItem[] = [];
    for await (const item of client.responses.inputItems.list(id, { order: 'asc', limit: 100 }, { signal })) inputs.push(item as ListedItem);
    segments.push({ responseId: response.id, messages: [...messagesFromItems(inputs), ...messagesFromItems(response.output as ListedItem[], response.id)] });
    id = response.previous_response_id;
  }
  segments.reverse();
  const messages: ChatMessage[] = [];
  const responseEnds: { count: number; responseId: string }[] = [];
  for (const segment of segments) {
    messages.push(...segment.messages);
    responseEnds.push({ count: messages.length, responseId: segment.responseId });
  }
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
