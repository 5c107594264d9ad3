import { type AIContent, type FunctionCallContent, type UsageDetails, addUsage, isUsage } from '../messages/content.js';
import type { ChatMessage, ChatRole } from '../messages/chat-message.js';
import { messageText } from '../messages/chat-message.js';
import type { TextContent } from '../messages/content.js';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'incomplete' | (string & {});

/** A whole reply from a ChatClient. */
export interface ChatResponse {
  messages: ChatMessage[];
  /** The service's id for this response, when it has one. */
  responseId?: string;
  /** The service-side conversation to continue next time (service-managed threads). */
  conversationId?: string;
  modelId?: string;
  finishReason?: FinishReason;
  usage?: UsageDetails;
  /** Provider state a thread must keep to continue (e.g. pending call ids). JSON only. */
  continuation?: Record<string, unknown>;
}

/** Progress of a tool call while its arguments stream in. */
export interface ToolCallDelta {
  index: number;
  callId?: string;
  name?: string;
  argumentsDelta: string;
  /**
   * Set when the service itself makes the call, on this hosted MCP server: progress to show,
   * nothing for the agent to run (the finished call arrives as `hosted-mcp-call` content).
   */
  serverLabel?: string;
}

/** One piece of a streamed reply. */
export interface ChatResponseUpdate {
  role?: ChatRole;
  /** Text deltas, complete function calls, usage, ... */
  contents: AIContent[];
  messageId?: string;
  responseId?: string;
  conversationId?: string;
  modelId?: string;
  finishReason?: FinishReason;
  toolCallDelta?: ToolCallDelta;
  continuation?: Record<string, unknown>;
}

export function responseText(response: { messages: readonly ChatMessage[] }): string {
  let text = '';
  for (const m of response.messages) if (m.role === 'assistant') text += messageText(m);
  return text;
}

/**
 * Folds streamed updates into the ChatResponse a non-streaming call would have returned:
 * adjacent text deltas of one message are joined, usage is summed into `usage`.
 */
export function responseFromUpdates(updates: readonly ChatResponseUpdate[]): ChatResponse {
  const folder = new ChatResponseFolder();
  for (const update of updates) folder.add(update);
  return folder.response();
}

/** `responseFromUpdates`, one update at a time as they arrive (no list kept). */
export class ChatResponseFolder {
  readonly #response: ChatResponse = { messages: [] };
  #current: ChatMessage | undefined;
  /** The text content being joined (a copy: the updates' own contents stay untouched) and its parts. */
  #joined: TextContent | undefined;
  #parts: string[] = [];
  #done = false;

  add(update: ChatResponseUpdate): void {
    const response = this.#response;
    if (update.responseId) response.responseId = update.responseId;
    if (update.conversationId) response.conversationId = update.conversationId;
    if (update.modelId) response.modelId = update.modelId;
    if (update.finishReason) response.finishReason = update.finishReason;
    if (update.continuation) response.continuation = { ...response.continuation, ...update.continuation };
    let message: ChatMessage | undefined;
    for (const content of update.contents) {
      if (isUsage(content)) {
        response.usage = addUsage(response.usage, content.usage);
        continue;
      }
      // The update's message is picked on its first non-usage content, as a whole update would be.
      message ??= this.#messageFor(update);
      this.#append(message, content);
    }
  }

  /** The folded response; call once all updates are in. */
  response(): ChatResponse {
    if (!this.#done) {
      this.#done = true;
      this.#flushText();
      // Arrays grown by push keep spare slots; these messages may be stored for long.
      for (const message of this.#response.messages) message.contents = message.contents.slice();
    }
    return this.#response;
  }

  #messageFor(update: ChatResponseUpdate): ChatMessage {
    const current = this.#current;
    const role = update.role ?? current?.role ?? 'assistant';
    if (current && current.role === role && (!update.messageId || update.messageId === current.messageId)) return current;
    // All fields at once: a field added later goes to a separate property store.
    const message: ChatMessage = update.messageId ? { role, contents: [], messageId: update.messageId } : { role, contents: [] };
    this.#response.messages.push(message);
    this.#current = message;
    return message;
  }

  /** Appends `content`, joining adjacent text; the joined text is built once, flat, not one concatenation per delta. */
  #append(message: ChatMessage, content: AIContent): void {
    const last = message.contents[message.contents.length - 1];
    if (content.kind === 'text' && last?.kind === 'text' && !content.additionalProperties) {
      if (last === this.#joined) {
        this.#parts.push(content.text);
        return;
      }
      this.#flushText();
      const copy = { ...last };
      message.contents[message.contents.length - 1] = copy;
      this.#joined = copy;
      this.#parts = [last.text, content.text];
      return;
    }
    message.contents.push(content);
  }

  #flushText(): void {
    if (!this.#joined) return;
    this.#joined.text = this.#parts.join('');
    this.#joined = undefined;
    this.#parts = [];
  }
}

export function functionCallsOf(messages: readonly ChatMessage[]): FunctionCallContent[] {
  const calls: FunctionCallContent[] = [];
  for (const m of messages) for (const c of m.contents) if (c.kind === 'function-call') calls.push(c);
  return calls;
}
