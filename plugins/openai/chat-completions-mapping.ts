import { functionResultText } from 'skein';
import type OpenAI from 'openai';
import type {
  AIContent,
  ChatMessage,
  ChatOptions,
  ChatResponse,
  FunctionCallContent,
  FunctionResultContent,
  UsageDetails,
} from 'skein';

type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** Skein messages -> Chat Completions `messages`, instructions first as a system message. */
export function toChatCompletionMessages(messages: readonly ChatMessage[], instructions?: string): MessageParam[] {
  const out: MessageParam[] = [];
  if (instructions) out.push({ role: 'system', content: instructions });
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        out.push(withName({ role: 'system', content: textOf(message.contents) }, message));
        break;
      case 'user':
        out.push(withName({ role: 'user', content: userContent(message.contents) }, message));
        break;
      case 'assistant':
        out.push(assistantMessage(message.contents));
        break;
      case 'tool':
        for (const c of message.contents) if (c.kind === 'function-result') out.push(toolMessage(c));
        break;
    }
  }
  // An exact-size copy: an array grown by push keeps spare slots (16 for a short history), and
  // the SDK holds the request, and this array, until the reply has arrived.
  return out.slice();
}

/** The largest `name` the API takes, and the characters kept (others become `_`). */
const MAX_PARTICIPANT_NAME = 64;
const NOT_IN_NAME = /[^a-zA-Z0-9_-]+/g;

/**
 * The Chat Completions `name` for a message's author, so the model can tell participants of one
 * role apart (another agent's words reach it as a user message). The API accepts only
 * `^[a-zA-Z0-9_-]{1,64}$`-like names and rejects the whole request otherwise, so the name is
 * sanitised: accents dropped (`José` -> `Jose`), every run of other characters replaced by one
 * `_` (`Data Analyst` -> `Data_Analyst`), cut to 64 characters. A name with nothing left (e.g.
 * only non-Latin letters) is not sent. The message's own `authorName` is not changed.
 */
export function participantName(authorName: string | undefined): string | undefined {
  if (authorName === undefined) return undefined;
  const latin = authorName.trim().normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  const name = latin.replace(NOT_IN_NAME, '_').slice(0, MAX_PARTICIPANT_NAME);
  return /[a-zA-Z0-9]/.test(name) ? name : undefined;
}

/** Adds the author's `name` to a user or system message (the agent's own replies need none). */
function withName<T extends OpenAI.Chat.Completions.ChatCompletionUserMessageParam | OpenAI.Chat.Completions.ChatCompletionSystemMessageParam>(param: T, message: ChatMessage): T {
  const name = participantName(message.authorName);
  return name === undefined ? param : { ...param, name };
}

function textOf(contents: readonly AIContent[]): string {
  let text = '';
  for (const c of contents) if (c.kind === 'text') text += c.text;
  return text;
}

function userContent(contents: readonly AIContent[]): string | ContentPart[] {
  if (contents.length === 1 && contents[0]!.kind === 'text') return contents[0]!.text;
  if (contents.every((c) => c.kind === 'text')) return textOf(contents);
  const parts: ContentPart[] = [];
  for (const c of contents) {
    if (c.kind === 'text') parts.push({ type: 'text', text: c.text });
    else if (c.kind === 'data' && c.mediaType.startsWith('image/')) parts.push({ type: 'image_url', image_url: { url: `data:${c.mediaType};base64,${c.data}` } });
    else if (c.kind === 'uri') parts.push({ type: 'image_url', image_url: { url: c.uri } });
  }
  return parts;
}

function assistantMessage(contents: readonly AIContent[]): MessageParam {
  if (contents.length === 1 && contents[0]!.kind === 'text') return { role: 'assistant', content: contents[0]!.text };
  const calls = contents.filter((c): c is FunctionCallContent => c.kind === 'function-call');
  const text = textOf(contents);
  const message: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (calls.length) {
    message.tool_calls = calls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return message;
}

function toolMessage(result: FunctionResultContent): MessageParam {
  return { role: 'tool', tool_call_id: result.callId, content: functionResultText(result) };
}

export function toChatCompletionTools(options: ChatOptions): OpenAI.Chat.Completions.ChatCompletionTool[] | undefined {
  if (!options.tools?.length) return undefined;
  return options.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

export function usageFrom(usage: OpenAI.Completions.CompletionUsage | null | undefined): UsageDetails | undefined {
  if (!usage) return undefined;
  return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, totalTokens: usage.total_tokens };
}

export function fromChatCompletion(completion: OpenAI.Chat.Completions.ChatCompletion): ChatResponse {
  const choice = completion.choices[0];
  // An array literal is allocated at its exact size; one grown from [] by push keeps spare slots
  // for as long as the message is stored.
  const contents: AIContent[] = choice?.message.content ? [{ kind: 'text', text: choice.message.content }] : [];
  if (choice?.message.refusal) contents.push({ kind: 'error', message: choice.message.refusal, code: 'refusal' });
  for (const call of choice?.message.tool_calls ?? []) {
    if (call.type === 'function') {
      contents.push({ kind: 'function-call', callId: call.id, name: call.function.name, arguments: call.function.arguments });
    }
  }
  const response: ChatResponse = {
    messages: contents.length ? [{ role: 'assistant', contents, messageId: completion.id }] : [],
    responseId: completion.id,
    modelId: completion.model,
    finishReason: choice?.finish_reason,
  };
  const usage = usageFrom(completion.usage);
  if (usage) response.usage = usage;
  return response;
}
