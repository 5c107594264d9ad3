import type { AIAgent } from '../agents/ai-agent.js';
import { ChatAgent } from '../agents/chat-agent.js';
import { waitingApprovalsOf } from '../agents/function-approvals.js';
import type { ChatOptions } from '../clients/chat-options.js';
import { approvalResponse, type ChatMessage, textMessage } from '../messages/chat-message.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { ApprovalAnswer, RunSettings } from './devui-api-types.js';
import { asObject, HttpError } from './devui-http.js';
import type { DevUIState } from './devui-state.js';
import type { ThreadIndexEntry } from './thread-index.js';

/** A checked `POST /api/chat`: the agent, the thread the turn runs on, and the turn's input. */
export interface ChatTurn {
  agentName: string;
  agent: AIAgent;
  /** The listed thread the turn continues; a new thread has none. */
  threadId?: string;
  existing?: ThreadIndexEntry;
  thread: AgentThread;
  /** The answers to pending approvals first, then the typed text. */
  input: ChatMessage[];
  settings?: RunSettings;
}

/**
 * Checks a chat request before any stream starts, so a bad one is a plain 4xx: the turn's input is
 * the typed text, the answers to pending approvals, or both.
 */
export async function parseChatTurn(state: DevUIState, body: Record<string, unknown>): Promise<ChatTurn> {
  const answers = parseApprovals(body.approvals);
  const text = typeof body.text === 'string' && body.text.trim() !== '' ? body.text : undefined;
  if (body.text !== undefined && typeof body.text !== 'string') throw new HttpError(400, '"text" must be a string.');
  if (text === undefined && answers.length === 0) throw new HttpError(400, 'Type a message to send.');
  const threadId = typeof body.threadId === 'string' && body.threadId ? body.threadId : undefined;
  if (answers.length && threadId === undefined) throw new HttpError(400, 'Approvals answer the tool calls of a thread: give its "threadId".');
  const existing = threadId === undefined ? undefined : await state.entry(threadId);
  if (existing && body.agent !== undefined && body.agent !== existing.agent) {
    throw new HttpError(400, `Thread "${existing.title}" belongs to agent "${existing.agent}", not "${String(body.agent)}".`, 'ThreadCompatibilityError');
  }
  const agentName = existing?.agent ?? (body.agent as string);
  const agent = state.agent(agentName);
  const settings = parseRunSettings(body.settings, agent, agentName);
  if (threadId !== undefined && state.busyThreads.has(threadId)) {
    throw new HttpError(409, 'This thread is already running a turn; wait for it or stop it.', 'ThreadBusyError');
  }
  const thread = existing ? await agent.deserializeThread(existing.serialized) : agent.getNewThread();
  // Checked before the stream starts, so a stale answer (another tab answered first) is a plain 409, not a failed turn.
  const pending = waitingApprovalsOf(thread);
  for (const answer of answers) {
    if (!pending.some((call) => call.callId === answer.callId)) {
      const waiting = pending.map((call) => `${call.name} (${call.callId})`).join(', ') || 'none';
      throw new HttpError(409, `Tool call ${answer.callId} is not waiting for approval on this thread (waiting: ${waiting}); it may have been answered already.`, 'SkeinError');
    }
  }
  const input: ChatMessage[] = answers.map((a) => approvalResponse(a, a.approved, a.reason));
  if (text !== undefined) input.push(textMessage('user', text));
  return { agentName, agent, threadId, existing, thread, input, ...(settings ? { settings } : {}) };
}

/** `approvals` of a chat request: `[{callId, approved, reason?}]`, each call answered once. */
function parseApprovals(value: unknown): ApprovalAnswer[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new HttpError(400, '"approvals" must be an array of {callId, approved, reason?}.');
  const seen = new Set<string>();
  return value.map((item: unknown, i) => {
    const answer = asObject(item, `approvals[${i}]`);
    if (typeof answer.callId !== 'string' || answer.callId === '') throw new HttpError(400, `approvals[${i}].callId must be the id of a pending tool call.`);
    if (typeof answer.approved !== 'boolean') throw new HttpError(400, `approvals[${i}].approved must be true or false.`);
    if (answer.reason !== undefined && typeof answer.reason !== 'string') throw new HttpError(400, `approvals[${i}].reason must be a string.`);
    if (seen.has(answer.callId)) throw new HttpError(400, `Tool call ${answer.callId} is answered twice.`);
    seen.add(answer.callId);
    const parsed: ApprovalAnswer = { callId: answer.callId, approved: answer.approved };
    const reason = typeof answer.reason === 'string' ? answer.reason.trim() : '';
    if (reason) parsed.reason = reason;
    return parsed;
  });
}

/** Checks `settings` of a chat request; only agents that build their own model requests (ChatAgent, durable or not) take them. */
function parseRunSettings(value: unknown, agent: AIAgent, agentName: string): RunSettings | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = asObject(value, '"settings"');
  const settings: RunSettings = {};
  for (const key of Object.keys(raw)) {
    if (!['temperature', 'maxOutputTokens', 'model', 'instructions'].includes(key)) {
      throw new HttpError(400, `settings.${key} is not a run setting; expected temperature, maxOutputTokens, model or instructions.`);
    }
  }
  if (raw.temperature !== undefined) {
    if (typeof raw.temperature !== 'number' || !(raw.temperature >= 0 && raw.temperature <= 2)) {
      throw new HttpError(400, `settings.temperature must be a number from 0 to 2; got ${JSON.stringify(raw.temperature)}.`);
    }
    settings.temperature = raw.temperature;
  }
  if (raw.maxOutputTokens !== undefined) {
    if (typeof raw.maxOutputTokens !== 'number' || !Number.isInteger(raw.maxOutputTokens) || raw.maxOutputTokens < 1) {
      throw new HttpError(400, `settings.maxOutputTokens must be a whole number of at least 1; got ${JSON.stringify(raw.maxOutputTokens)}.`);
    }
    settings.maxOutputTokens = raw.maxOutputTokens;
  }
  for (const key of ['model', 'instructions'] as const) {
    const text = raw[key];
    if (text === undefined) continue;
    if (typeof text !== 'string') throw new HttpError(400, `settings.${key} must be a string; got ${JSON.stringify(text)}.`);
    if (text.trim()) settings[key] = text.trim();
  }
  if (!Object.keys(settings).length) return undefined;
  if (!(agent instanceof ChatAgent)) {
    throw new HttpError(400, `Agent "${agentName}" runs on a service that sets its own model options; run settings apply to agents with a chat client (openai-chat, openai-responses). Send the turn without settings.`);
  }
  return settings;
}

/** The run's chat options: extra instructions go after the agent's own, the rest as given. */
export function chatOptionsOf(settings: RunSettings, agent: AIAgent): ChatOptions {
  const { instructions, ...options } = settings;
  const own = agent instanceof ChatAgent ? agent.instructions : undefined;
  return instructions ? { ...options, instructions: own ? `${own}\n\n${instructions}` : instructions } : options;
}
