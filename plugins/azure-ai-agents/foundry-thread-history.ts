import type { AgentsClient, ThreadMessage, ToolDefinitionUnion } from '@azure/ai-agents';
import { type AIContent, type ChatMessage, collapseToToolResultsNotes, expandToolResultsNotes, isFinishedRunStatus, toolResultsMarkerOf, unfinishedTurnStart } from 'skein';
import { listAll } from './azure-ai-agents-errors.js';
import { listEveryPage } from './foundry-paging.js';
import { FOUNDRY_FILE_SCHEME, foundryMessageDrafts, foundryMessages } from './foundry-message-content.js';

/**
 * Every message of a Foundry thread, oldest first (all pages), as Skein messages: text, images
 * (`image_file` -> `foundry-file:<id>` with an `image/*` type) and attachments (`foundry-file:<id>`),
 * so a fork seeds them back as the same blocks. Tool steps are run steps, not messages: they are
 * not part of the history read here, except the calls and results a tool results note carries
 * (see expandToolResultsNotes).
 */
export async function foundryThreadMessages(client: AgentsClient, threadId: string, signal?: AbortSignal): Promise<ChatMessage[]> {
  const listed = await listEveryPage((o) => client.messages.list(threadId, { order: 'asc', abortSignal: signal, ...o }));
  return expandToolResultsNotes(listed.map(toChatMessage));
}

function toChatMessage(m: ThreadMessage): ChatMessage {
  const contents: AIContent[] = [];
  for (const part of m.content as { type: string }[]) {
    if (part.type === 'text') contents.push({ kind: 'text', text: (part as unknown as { text: { value: string } }).text.value });
    else if (part.type === 'image_file') {
      const fileId = (part as unknown as { imageFile: { fileId: string } }).imageFile.fileId;
      contents.push({ kind: 'uri', uri: `${FOUNDRY_FILE_SCHEME}${fileId}`, mediaType: 'image/*' });
    }
  }
  // Attached files keep the tools they were attached for, so a fork attaches them the same way.
  for (const attachment of m.attachments ?? []) {
    if (!attachment.fileId) continue;
    const tools = (attachment.tools ?? []).map((t) => t.type);
    contents.push({ kind: 'uri', uri: `${FOUNDRY_FILE_SCHEME}${attachment.fileId}`, additionalProperties: { tools } });
  }
  const marker = toolResultsMarkerOf(m.metadata);
  return { role: m.role === 'assistant' ? 'assistant' : 'user', contents, messageId: m.id, createdAt: m.createdAt.toISOString(), ...(marker ? { additionalProperties: marker } : {}) };
}

/** The tools the messages' files were attached for (read back by foundryThreadMessages), as the tools attachments get. */
function attachedWith(messages: readonly ChatMessage[]): ToolDefinitionUnion[] {
  const types = new Set<string>();
  for (const m of messages) {
    for (const c of m.contents) {
      const tools = c.additionalProperties?.tools;
      if (Array.isArray(tools)) for (const t of tools) if (t === 'file_search' || t === 'code_interpreter') types.add(t);
    }
  }
  return [...types].map((type) => ({ type }) as ToolDefinitionUnion);
}

/**
 * How many of `messages` (the thread's history as just read, oldest first) a fork may hold: all
 * of them, unless the thread's newest run has not finished its turn (waiting for tool outputs or
 * an approval, expired, cancelled, failed): then the fork ends before that turn, whose input the
 * history shows while the calls it waits on are run steps it does not (see unfinishedTurnStart).
 */
export async function foundryFinishedCount(client: AgentsClient, threadId: string, messages: readonly ChatMessage[], signal?: AbortSignal): Promise<number> {
  const [newest] = await listAll((o) => client.runs.list(threadId, { order: 'desc', limit: 1, abortSignal: signal, ...o }), 1);
  if (!newest || isFinishedRunStatus(newest.status)) return messages.length;
  const wrote = await listEveryPage((o) => client.messages.list(threadId, { runId: newest.id, order: 'asc', abortSignal: signal, ...o }));
  return unfinishedTurnStart(messages, new Set(wrote.map((m) => m.id)));
}

/**
 * A new Foundry thread seeded with `messages` (user and assistant messages, with their images and
 * attachments; function calls and results go back into tool results notes, so the new thread's
 * runs read them). Content Foundry cannot carry is a FoundryInputError before the thread is created.
 */
export async function seededFoundryThread(client: AgentsClient, messages: readonly ChatMessage[], signal?: AbortSignal): Promise<string> {
  const seeded = foundryMessages(foundryMessageDrafts(collapseToToolResultsNotes(messages)), attachedWith(messages));
  const thread = await client.threads.create({ messages: seeded, abortSignal: signal });
  return thread.id;
}
