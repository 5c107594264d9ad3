import { parseToolResultsNote } from '../../agents/tool-results-note.js';

/**
 * A small deterministic "model" shared by every emulated service. It answers only from the
 * messages it is sent, so whether a caller really sends the conversation history is observable.
 */

export type ModelRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelMessage {
  role: ModelRole;
  text: string;
  /** Tool calls an assistant message made. */
  toolCalls?: ModelToolCall[];
  /** For a 'tool' message: the id of the call it answers. */
  toolCallId?: string;
}

export interface ModelTool {
  name: string;
  description?: string;
  /** A JSON schema object. */
  parameters?: Record<string, unknown>;
}

export interface ModelTextReply {
  text: string;
}

export interface ModelToolCallsReply {
  toolCalls: { name: string; arguments: string }[];
}

export type ModelReply = ModelTextReply | ModelToolCallsReply;

export function isToolCallsReply(reply: ModelReply): reply is ModelToolCallsReply {
  return 'toolCalls' in reply;
}

/** Verbs that say nothing about what a tool is for, so natural use ignores them. */
const GENERIC_TOOL_WORDS = new Set(['get', 'set', 'fetch', 'lookup']);

export class EmulatedModel {
  reply(messages: readonly ModelMessage[], tools: readonly ModelTool[]): ModelReply {
    const userIndex = findLastIndex(messages, (message) => message.role === 'user');
    const userText = userIndex >= 0 ? messages[userIndex].text : '';
    const earlier = userIndex >= 0 ? messages.slice(0, userIndex) : [...messages];
    const after = userIndex >= 0 ? messages.slice(userIndex + 1) : [];

    return (
      this.answerToolResultsNote(userText) ??
      this.answerToolResults(userText, messages, after, tools) ??
      this.explicitToolCalls(userText, tools) ??
      this.naturalToolCalls(userText, tools) ??
      this.conversationalAnswer(userText, earlier) ?? {
        text: `You said: "${userText}" (I have seen ${earlier.length} earlier messages.)`,
      }
    );
  }

  /** A rough token count (words), enough for plausible usage numbers. */
  countTokens(text: string): number {
    return text.split(/\s+/).filter((word) => word.length > 0).length;
  }

  private answerToolResults(
    userText: string,
    messages: readonly ModelMessage[],
    after: readonly ModelMessage[],
    tools: readonly ModelTool[],
  ): ModelReply | undefined {
    const results = after.filter((message) => message.role === 'tool');
    if (results.length === 0) return undefined;

    const keepCalling = /keep calling\s+([A-Za-z0-9_-]+)/i.exec(userText)?.[1];
    if (keepCalling !== undefined && offers(tools, keepCalling)) {
      const previous = after
        .flatMap((message) => message.toolCalls ?? [])
        .filter((call) => call.name === keepCalling)
        .pop();
      return { toolCalls: [{ name: keepCalling, arguments: previous?.arguments ?? '{}' }] };
    }

    const callNames = new Map<string, string>();
    for (const call of messages.flatMap((message) => message.toolCalls ?? [])) {
      callNames.set(call.id, call.name);
    }
    const sentences = results.map((result) => {
      const name = (result.toolCallId !== undefined && callNames.get(result.toolCallId)) || 'unknown_tool';
      return `${name} returned: ${result.text}`;
    });
    return { text: sentences.join('\n') };
  }

  /**
   * Skein's note of settled tool calls (see `toolResultsNote`), the way a service run reads the
   * results of calls whose own run ended without them: answered like tool results, never as a
   * request to call the tools again.
   */
  private answerToolResultsNote(userText: string): ModelReply | undefined {
    const entries = parseToolResultsNote(userText);
    if (!entries) return undefined;
    return { text: entries.map((e) => `${e.name ?? 'unknown_tool'} returned: ${e.result ?? e.error}`).join('\n') };
  }

  /** `call <tool> <args> and call <tool> <args>`: args are kept raw, valid JSON or not. */
  private explicitToolCalls(userText: string, tools: readonly ModelTool[]): ModelReply | undefined {
    const pattern = /(?:^|\s)call\s+([A-Za-z0-9_-]+)/g;
    const starts = [...userText.matchAll(pattern)].filter((match) => offers(tools, match[1]));
    if (starts.length === 0) return undefined;

    const toolCalls = starts.map((match, i) => {
      const argsStart = (match.index ?? 0) + match[0].length;
      const argsEnd = i + 1 < starts.length ? (starts[i + 1].index ?? userText.length) : userText.length;
      return { name: match[1], arguments: cleanArguments(userText.slice(argsStart, argsEnd)) };
    });
    return { toolCalls };
  }

  private naturalToolCalls(userText: string, tools: readonly ModelTool[]): ModelReply | undefined {
    const lowered = userText.toLowerCase();
    const matching = tools.filter((tool) => {
      const words = toolNameWords(tool.name);
      return words.length > 0 && words.every((word) => containsWord(lowered, word));
    });
    if (matching.length === 0) return undefined;

    const value = lastCapitalizedWord(userText);
    return {
      toolCalls: matching.map((tool) => ({
        name: tool.name,
        arguments: JSON.stringify(fillStringProperties(tool.parameters, value)),
      })),
    };
  }

  private conversationalAnswer(userText: string, earlier: readonly ModelMessage[]): ModelReply | undefined {
    const introduced = /my name is\s+([^\s.,!?;:]+)/i.exec(userText);
    if (introduced) return { text: `Nice to meet you, ${introduced[1]}!` };

    const earlierUserTexts = earlier.filter((message) => message.role === 'user').map((message) => message.text);

    if (/what(?:'s|’s|\s+is)\s+my name/i.test(userText)) {
      const name = earlierUserTexts
        .map((text) => /my name is\s+([^\s.,!?;:]+)/i.exec(text)?.[1])
        .filter((found): found is string => found !== undefined)
        .pop();
      return { text: name === undefined ? "I don't know your name yet." : `Your name is ${name}.` };
    }

    if (/what (?:did|have) we talk(?:ed)? about/i.test(userText)) {
      if (earlierUserTexts.length === 0) return { text: 'We have not talked about anything yet.' };
      return { text: `We talked about: ${earlierUserTexts.map((text) => `"${text}"`).join('; ')}` };
    }

    if (/what are your instructions/i.test(userText)) {
      const instructions = earlier.filter((message) => message.role === 'system').map((message) => message.text);
      return { text: instructions.length === 0 ? 'I have no instructions.' : instructions.join('\n') };
    }

    return undefined;
  }
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) {
    if (predicate(items[i])) return i;
  }
  return -1;
}

function offers(tools: readonly ModelTool[], name: string): boolean {
  return tools.some((tool) => tool.name === name);
}

/** Drops the joining ` and` of the next segment; an empty or punctuation-only rest means no args. */
function cleanArguments(raw: string): string {
  const trimmed = raw.trim().replace(/\s+and$/i, '').trim();
  return /^[.,!?;:]*$/.test(trimmed) ? '{}' : trimmed;
}

/** `get_current_weather` / `getCurrentWeather` -> ['current', 'weather']. */
export function toolNameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .map((word) => word.toLowerCase())
    .filter((word) => word.length > 0 && !GENERIC_TOOL_WORDS.has(word));
}

function containsWord(loweredText: string, word: string): boolean {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?:^|[^a-z0-9])${escaped}(?:$|[^a-z0-9])`).test(loweredText);
}

function lastCapitalizedWord(text: string): string {
  const words = text.match(/\b[A-Z][A-Za-z'-]*/g) ?? [];
  return words.length > 0 ? words[words.length - 1] : '';
}

function fillStringProperties(schema: Record<string, unknown> | undefined, value: string): Record<string, string> {
  const args: Record<string, string> = {};
  const properties = schema?.properties;
  if (typeof properties !== 'object' || properties === null) return args;
  for (const [name, property] of Object.entries(properties)) {
    if (typeof property === 'object' && property !== null && (property as { type?: unknown }).type === 'string') {
      args[name] = value;
    }
  }
  return args;
}
