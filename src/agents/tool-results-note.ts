import { type ChatMessage, messageText } from '../messages/chat-message.js';
import { type FunctionCallContent, type FunctionResultContent, functionResultText, isFunctionCall, isFunctionResult } from '../messages/content.js';
import type { JsonObject } from '../serialization/json.js';
import { namingCall, settledCallOf } from './function-approvals.js';

/** Metadata key (value `tool-results`) of the message that carries settled tool results to a new service run. */
export const TOOL_RESULTS_MESSAGE_METADATA_KEY = 'skein_kind';

/** The value of `TOOL_RESULTS_MESSAGE_METADATA_KEY` on a tool results note. */
export const TOOL_RESULTS_MESSAGE_KIND = 'tool-results';

/** The first line of `toolResultsNote`: how a reader (the emulator's model included) knows one. */
export const TOOL_RESULTS_NOTE_HEADING = '[tool results] The tool calls you made earlier in this conversation were settled:';

/** The name a call gets in history when its note did not name it. */
const UNNAMED_CALL = 'unknown_tool';

/** The metadata a service message that is a tool results note carries (a new object each time: callers add to it). */
export function toolResultsNoteMetadata(): Record<string, string> {
  return { [TOOL_RESULTS_MESSAGE_METADATA_KEY]: TOOL_RESULTS_MESSAGE_KIND };
}

/**
 * The text of a user message that tells the model what became of calls it made in a service run
 * that ended without their outputs (cancelled while the user decided, or expired): the service
 * takes tool outputs only for a run waiting in `requires_action`, so a new run reads them this way.
 * One entry per call, `- <tool> <arguments> (call <id>): returned <result>` (or the error); the
 * lines of a multi-line entry after its first are indented by two spaces, so `parseToolResultsNote`
 * reads every entry back whole.
 */
export function toolResultsNote(results: readonly FunctionResultContent[]): string {
  const entries = results.map((r) => {
    const call = settledCallOf(r);
    const what = call ? `${call.name} ${call.arguments || '{}'}` : 'a tool';
    return `- ${what} (call ${r.callId}): ${r.error !== undefined ? r.error : `returned ${functionResultText(r)}`}`.replaceAll('\n', '\n  ');
  });
  return `${TOOL_RESULTS_NOTE_HEADING}\n${entries.join('\n')}`;
}

/** One settled call of a tool results note, as `parseToolResultsNote` reads it back. */
export interface ToolResultsNoteEntry {
  callId: string;
  /** Undefined when the note did not name the call. */
  name?: string;
  arguments: string;
  /** The result's text (`returned ...`), or else the error. */
  result?: string;
  error?: string;
}

/** The entries of a `toolResultsNote` text, in order; undefined for any other text. */
export function parseToolResultsNote(text: string): ToolResultsNoteEntry[] | undefined {
  const [heading, ...lines] = text.split('\n');
  if (heading !== TOOL_RESULTS_NOTE_HEADING) return undefined;
  const raw: string[] = [];
  for (const line of lines) {
    if (line.startsWith('- ')) raw.push(line);
    else if (line.startsWith('  ') && raw.length) raw[raw.length - 1] += `\n${line.slice(2)}`;
  }
  return raw.flatMap((entry) => {
    const m = /^- (?:a tool|(\S+) ([\s\S]*?)) \(call ([^)\s]+)\): ([\s\S]*)$/.exec(entry);
    if (!m) return [];
    const said = m[4]!;
    const outcome = said.startsWith('returned ') ? { result: said.slice('returned '.length) } : { error: said };
    return [{ callId: m[3]!, ...(m[1] !== undefined ? { name: m[1] } : {}), arguments: m[2] ?? '', ...outcome }];
  });
}

/** Whether a message read from a service thread is a tool results note (its metadata, kept as `additionalProperties`). */
export function isToolResultsMessage(message: ChatMessage): boolean {
  return message.additionalProperties?.[TOOL_RESULTS_MESSAGE_METADATA_KEY] === TOOL_RESULTS_MESSAGE_KIND;
}

/** The marker a message read from a note keeps (`additionalProperties`), for readers and forks. */
function marker(): JsonObject {
  return { [TOOL_RESULTS_MESSAGE_METADATA_KEY]: TOOL_RESULTS_MESSAGE_KIND };
}

/** The `additionalProperties` of a message read from a service whose metadata marks a tool results note; undefined for any other. */
export function toolResultsMarkerOf(metadata: unknown): JsonObject | undefined {
  const marked = typeof metadata === 'object' && metadata !== null && (metadata as Record<string, unknown>)[TOOL_RESULTS_MESSAGE_METADATA_KEY] === TOOL_RESULTS_MESSAGE_KIND;
  return marked ? marker() : undefined;
}

/**
 * A service thread's history (Assistants, Foundry) as the conversation it stands for: each tool
 * results note (a user message marked by its metadata) becomes what it carries, the function
 * results in a `tool` message, preceded by an `assistant` message with the calls they answer when
 * the history holds no such call (run steps are not messages). Both keep the note's marker; the
 * tool message keeps the note's id, the calls message gets `<id>:calls`.
 */
export function expandToolResultsNotes(messages: readonly ChatMessage[]): ChatMessage[] {
  const called = new Set<string>();
  const out: ChatMessage[] = [];
  for (const message of messages) {
    for (const c of message.contents) if (isFunctionCall(c)) called.add(c.callId);
    const entries = isToolResultsMessage(message) ? parseToolResultsNote(messageText(message)) : undefined;
    if (!entries?.length) {
      out.push(message);
      continue;
    }
    const calls = entries.filter((e) => !called.has(e.callId)).map((e): FunctionCallContent => ({ kind: 'function-call', callId: e.callId, name: e.name ?? UNNAMED_CALL, arguments: e.arguments }));
    const at = message.createdAt !== undefined ? { createdAt: message.createdAt } : {};
    if (calls.length) out.push({ role: 'assistant', contents: calls, ...(message.messageId !== undefined ? { messageId: `${message.messageId}:calls` } : {}), ...at, additionalProperties: marker() });
    const results = entries.map((e): FunctionResultContent => ({ kind: 'function-result', callId: e.callId, ...(e.error !== undefined ? { error: e.error } : { result: e.result ?? '' }) }));
    out.push({ role: 'tool', contents: results, ...(message.messageId !== undefined ? { messageId: message.messageId } : {}), ...at, additionalProperties: marker() });
  }
  return out;
}

/**
 * The reverse, for seeding a new service thread (a fork): a service thread takes only user and
 * assistant messages, so function calls and results go back into tool results notes (user
 * messages carrying the marker, which the plugin sends as the message's metadata), each result
 * named by its call, so a run on the new thread reads them as the origin's did.
 */
export function collapseToToolResultsNotes(messages: readonly ChatMessage[]): ChatMessage[] {
  const calls = new Map<string, FunctionCallContent>();
  const out: ChatMessage[] = [];
  for (const message of messages) {
    const rest = message.contents.filter((c) => {
      if (isFunctionCall(c)) calls.set(c.callId, c);
      return !isFunctionCall(c) && !isFunctionResult(c);
    });
    const results = message.contents.filter(isFunctionResult);
    if (rest.length === message.contents.length) {
      out.push(message);
      continue;
    }
    if (rest.length) out.push({ ...message, contents: rest });
    if (!results.length) continue;
    const named = results.map((r) => {
      const call = calls.get(r.callId);
      return call && !settledCallOf(r) ? namingCall(r, call) : r;
    });
    out.push({ role: 'user', contents: [{ kind: 'text', text: toolResultsNote(named) }], ...(message.createdAt !== undefined ? { createdAt: message.createdAt } : {}), additionalProperties: marker() });
  }
  return out;
}
