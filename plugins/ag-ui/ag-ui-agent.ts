import type * as AgUiClient from '@ag-ui/client';
import type { BaseEvent, Message, ResumeEntry, Tool } from '@ag-ui/core';
import { randomUUID } from 'node:crypto';
import { Observable } from 'rxjs';
import {
  AIAgent,
  type AIContent,
  type AITool,
  type AgentInput,
  type AgentRunOptions,
  AgentRunResponse,
  type AgentRunResponseUpdate,
  AgentThread,
  type ChatMessage,
  type FunctionApprovalRequestContent,
  type FunctionResultContent,
  type JsonObject,
  type JsonValue,
  SERVICE_THREAD_TYPE,
  SerializationError,
  ThreadCompatibilityError,
  type UsageDetails,
  loadPeer,
  toMessages,
  toolMap,
} from 'skein';
import { AgUiRunError } from './ag-ui-errors.js';
import { resultFromAgUi } from './ag-ui-messages.js';
import { AG_UI_ENTRY_POINT, EventType } from './ag-ui-peers.js';
import { AG_UI_STATE_KEY } from './ag-ui-state.js';

export const AG_UI_PROVIDER_ID = 'ag-ui';
/** Thread-state key of the conversation as the remote agent knows it (its AG-UI messages and waiting interrupts). */
const CONVERSATION_KEY = 'agUiConversation';

export interface AgUiAgentOptions {
  /** The remote agent's endpoint (it takes POST RunAgentInput). */
  url: string;
  /** Sent with every request (e.g. `authorization`). */
  headers?: Record<string, string>;
  name?: string;
  description?: string;
  /** Tools the remote agent may call that run here, in this process (AG-UI frontend tools). */
  tools?: readonly AITool[];
  /** Most rounds of local tool calls in one run (default 8). */
  maxToolRounds?: number;
  /** The fetch the client uses (default the global one). */
  fetch?: typeof fetch;
}

interface Waiting {
  id: string;
  callId: string;
  name: string;
  arguments: string;
}

interface Conversation {
  messages: Message[];
  waiting: Waiting[];
}

/**
 * A remote AG-UI agent as a Skein agent: its thread is the remote `threadId` (a service thread),
 * and the thread state keeps the conversation as the remote knows it, since AG-UI clients send
 * the whole history on each run. Tools given here are offered as frontend tools and run in this
 * process; the remote agent's interrupts are Skein approval requests, answered with
 * `approvalResponse(...)` in the next run. Needs `@ag-ui/client`.
 *
 * @example
 * const agent = new AgUiAgent({ url: 'http://127.0.0.1:8000/agents/helper' });
 * const thread = agent.getNewThread();
 * console.log((await agent.run('Hello', { thread })).text);
 */
export class AgUiAgent extends AIAgent {
  readonly name: string | undefined;
  readonly description: string | undefined;
  readonly #options: AgUiAgentOptions;

  /** The remote agent's endpoint. */
  get url(): string {
    return this.#options.url;
  }
  readonly #tools: ReadonlyMap<string, AITool>;

  constructor(options: AgUiAgentOptions) {
    super();
    if (!options?.url) throw new TypeError("AgUiAgent needs the remote agent's url, e.g. new AgUiAgent({ url: 'http://127.0.0.1:8000/agents/helper' }).");
    new URL(options.url);
    this.#options = options;
    this.name = options.name;
    this.description = options.description;
    this.#tools = toolMap(options.tools ?? []);
  }

  getNewThread(): AgentThread {
    return new AgentThread({ origin: this.#origin() });
  }

  async deserializeThread(serialized: unknown): Promise<AgentThread> {
    const s = serialized as { $type?: unknown; provider?: unknown; serviceThreadId?: unknown; state?: unknown } | null;
    if (!s || typeof s !== 'object') throw new SerializationError('$', `expected a serialized AG-UI thread (an object), found ${JSON.stringify(serialized)}.`);
    if (s.provider !== AG_UI_PROVIDER_ID) throw new ThreadCompatibilityError(`This thread was made by "${String(s.provider)}", not by an AG-UI agent; continue it with the agent that made it.`);
    if (s.$type !== SERVICE_THREAD_TYPE && s.$type !== 'unstarted') throw new SerializationError('$.$type', `expected "service" or "unstarted" for an AG-UI thread, found ${JSON.stringify(s.$type)}.`);
    if (s.serviceThreadId !== undefined && typeof s.serviceThreadId !== 'string') throw new SerializationError('$.serviceThreadId', 'expected the remote threadId (a string).');
    const state = s.state === undefined ? {} : s.state;
    if (typeof state !== 'object' || state === null || Array.isArray(state)) throw new SerializationError('$.state', 'expected an object.');
    return new AgentThread({ origin: this.#origin(), ...(typeof s.serviceThreadId === 'string' ? { serviceThreadId: s.serviceThreadId } : {}), state: state as JsonObject });
  }

  /** Forgets the thread here; the remote AG-UI protocol has no call to delete a thread. */
  async deleteThread(thread: AgentThread): Promise<void> {
    thread.state = {};
  }

  override async getMessages(thread: AgentThread): Promise<ChatMessage[]> {
    return conversationOf(thread).messages.flatMap(toChatMessages);
  }

  async run(input: AgentInput, options: AgentRunOptions = {}): Promise<AgentRunResponse> {
    return this.#run(input, options, () => undefined);
  }

  runStream(input: AgentInput, options: AgentRunOptions = {}): Observable<AgentRunResponseUpdate> {
    return new Observable<AgentRunResponseUpdate>((subscriber) => {
      const controller = new AbortController();
      const onAbort = () => controller.abort(options.signal?.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#run(input, { ...options, signal: controller.signal }, (update) => {
        if (!subscriber.closed) subscriber.next(update);
      }).then(
        () => subscriber.complete(),
        (error: unknown) => {
          if (!subscriber.closed) subscriber.error(error);
        },
      );
      return () => {
        options.signal?.removeEventListener('abort', onAbort);
        controller.abort();
      };
    });
  }

  async #run(input: AgentInput, options: AgentRunOptions, emit: (update: AgentRunResponseUpdate) => void): Promise<AgentRunResponse> {
    const thread = options.thread ?? this.getNewThread();
    if (thread.origin.provider !== AG_UI_PROVIDER_ID) throw new ThreadCompatibilityError(`This thread was made by "${thread.origin.provider}"; an AgUiAgent continues only AG-UI threads.`);
    const release = await thread.acquire(options.concurrency);
    try {
      const { HttpAgent } = loadPeer<typeof AgUiClient>(AG_UI_ENTRY_POINT, '@ag-ui/client');
      const conversation = conversationOf(thread);
      const { resume, messages: userMessages } = this.#split(toMessages(input), conversation.waiting);
      const tools = new Map([...this.#tools, ...toolMap(options.tools ?? [])]);
      const declared: Tool[] = [...tools.values()].map((t) => ({ name: t.declaration.name, description: t.declaration.description ?? '', parameters: t.declaration.parameters }));
      const threadId = thread.serviceThreadId ?? randomUUID();
      const before = conversation.messages.length;
      let messages = [...conversation.messages, ...userMessages];
      let state: unknown = thread.state[AG_UI_STATE_KEY] ?? {};
      let usage: UsageDetails | undefined;
      let approvals: FunctionApprovalRequestContent[] = [];
      let waiting: Waiting[] = [];
      let nextResume: ResumeEntry[] | undefined = resume.length ? resume : undefined;
      // AG-UI's way to give one run more to go on: a context item (AgUiServer makes it instructions again).
      const context = options.additionalInstructions ? [{ description: 'Instructions for this run', value: options.additionalInstructions }] : [];
      for (let round = 0; ; round++) {
        const remote = new HttpAgent({ url: this.#options.url, headers: this.#options.headers, threadId, initialMessages: messages, initialState: state, ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}) });
        const events: BaseEvent[] = [];
        const controller = new AbortController();
        const abort = () => controller.abort();
        options.signal?.addEventListener('abort', abort, { once: true });
        try {
          await remote.runAgent({ tools: declared, context, ...(nextResume ? { resume: nextResume } : {}), abortController: controller } as Parameters<typeof remote.runAgent>[0], {
            onEvent: ({ event }) => {
              events.push(event);
              const update = toUpdate(event, events);
              if (update) emit(update);
            },
          });
        } catch (error) {
          throw this.#refusal(error, options.signal);
        } finally {
          options.signal?.removeEventListener('abort', abort);
        }
        if (options.signal?.aborted) throw new AgUiRunError('The run was aborted; the thread is unchanged.');
        const failed = events.find((e) => e.type === EventType.RUN_ERROR);
        if (failed) throw new AgUiRunError(`The AG-UI agent at ${this.#options.url} failed: ${String(failed.message)}`, typeof failed.code === 'string' ? failed.code : undefined);
        messages = remote.messages.filter((m) => m.role !== 'activity');
        state = remote.state;
        nextResume = undefined;
        const finished = events.find((e) => e.type === EventType.RUN_FINISHED) as (BaseEvent & { outcome?: { type: string; interrupts?: { id: string; toolCallId?: string; message?: string }[]; pendingToolCallIds?: string[] }; usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number }[] }) | undefined;
        for (const u of finished?.usage ?? []) usage = { inputTokens: (usage?.inputTokens ?? 0) + (u.inputTokens ?? 0), outputTokens: (usage?.outputTokens ?? 0) + (u.outputTokens ?? 0), totalTokens: (usage?.totalTokens ?? 0) + (u.totalTokens ?? 0) };
        const outcome = finished?.outcome;
        if (outcome?.type === 'interrupt') {
          waiting = (outcome.interrupts ?? []).map((i) => {
            const call = findCall(messages, i.toolCallId ?? i.id);
            return { id: i.id, callId: i.toolCallId ?? i.id, name: call?.name ?? 'interrupt', arguments: call?.arguments ?? JSON.stringify({ message: i.message ?? '' }) };
          });
          approvals = waiting.map((w) => ({ kind: 'function-approval-request', callId: w.id, name: w.name, arguments: w.arguments }));
          if (approvals.length) emit({ text: '', contents: approvals, role: 'assistant' });
          break;
        }
        const pending = outcome?.type === 'success' ? (outcome.pendingToolCallIds ?? []) : unansweredLocalCalls(messages, tools);
        if (pending.length === 0) break;
        if (round >= (this.#options.maxToolRounds ?? 8)) throw new AgUiRunError(`The AG-UI agent kept calling local tools for ${round + 1} rounds; stopped (maxToolRounds).`);
        for (const callId of pending) {
          const call = findCall(messages, callId);
          const tool = call && tools.get(call.name);
          const result: FunctionResultContent = tool
            ? await tool.invoke({ call: { kind: 'function-call', callId, name: call.name, arguments: call.arguments }, signal: options.signal ?? new AbortController().signal, thread })
            : { kind: 'function-result', callId, error: `no local tool "${call?.name ?? callId}"` };
          emit({ text: '', contents: [result], role: 'tool' });
          messages.push({ id: randomUUID(), role: 'tool', toolCallId: callId, content: result.error ?? (typeof result.result === 'string' ? result.result : JSON.stringify(result.result ?? null)), ...(result.error !== undefined ? { error: result.error } : {}) });
        }
      }
      if (!thread.serviceThreadId) thread.setServiceThreadId(threadId);
      const { [AG_UI_STATE_KEY]: _s, [CONVERSATION_KEY]: _c, ...rest } = thread.state;
      thread.state = { ...rest, [CONVERSATION_KEY]: { messages, waiting } as unknown as JsonValue, ...(state !== undefined ? { [AG_UI_STATE_KEY]: state as JsonValue } : {}) };
      // The reply is what the remote added: the input sent with the run is not part of it.
      const sent = new Set(userMessages.map((m) => m.id));
      const produced = messages.slice(before).filter((m) => !sent.has(m.id)).flatMap(toChatMessages);
      if (usage) emit({ text: '', contents: [{ kind: 'usage', usage }], role: 'assistant' });
      return new AgentRunResponse(produced, { conversationId: threadId, ...(usage ? { usage } : {}), ...(this.name ? { agentName: this.name } : {}), ...(approvals.length ? { approvalRequests: approvals } : {}) });
    } finally {
      release();
    }
  }

  /** The input as new AG-UI user messages and resume entries (answers to the waiting interrupts). */
  #split(input: readonly ChatMessage[], waiting: readonly Waiting[]): { resume: ResumeEntry[]; messages: Message[] } {
    const resume: ResumeEntry[] = [];
    const messages: Message[] = [];
    for (const m of input) {
      const rest: AIContent[] = [];
      for (const c of m.contents) {
        if (c.kind !== 'function-approval-response') {
          rest.push(c);
          continue;
        }
        const w = waiting.find((x) => x.id === c.callId || x.callId === c.callId);
        if (!w) throw new AgUiRunError(`No interrupt "${c.callId}" is waiting on this thread; waiting: ${waiting.map((x) => x.id).join(', ') || 'none'}.`);
        resume.push({ interruptId: w.id, status: c.approved ? 'resolved' : 'cancelled', payload: { approved: c.approved, ...(c.reason ? { reason: c.reason } : {}) } });
      }
      const text = rest.map((c) => (c.kind === 'text' ? c.text : '')).join('');
      // The speaker's name goes along (a group chat's other participants): the remote can tell who said what.
      if (rest.length) messages.push({ id: m.messageId ?? randomUUID(), role: m.role === 'system' ? 'system' : 'user', content: text, ...(m.authorName ? { name: m.authorName } : {}) } as Message);
    }
    return { resume, messages };
  }

  /** An HTTP refusal from the remote (`@ag-ui/client` puts its status and body on the error) as an AgUiRunError; anything else as it is. */
  #refusal(error: unknown, signal: AbortSignal | undefined): unknown {
    const { status, payload } = (error ?? {}) as { status?: unknown; payload?: unknown };
    if (signal?.aborted || typeof status !== 'number') return error;
    const said = typeof payload === 'object' && payload !== null && typeof (payload as { error?: unknown }).error === 'string' ? (payload as { error: string }).error : typeof payload === 'string' ? payload : JSON.stringify(payload ?? null);
    return new AgUiRunError(`The AG-UI agent at ${this.#options.url} refused the run (HTTP ${status}): ${said} The thread is unchanged.`, String(status));
  }

  #origin() {
    return { provider: AG_UI_PROVIDER_ID, ...(this.name ? { agent: this.name } : {}) };
  }
}

function conversationOf(thread: AgentThread): Conversation {
  const saved = thread.state[CONVERSATION_KEY] as unknown as Partial<Conversation> | undefined;
  return { messages: Array.isArray(saved?.messages) ? saved.messages : [], waiting: Array.isArray(saved?.waiting) ? saved.waiting : [] };
}

function findCall(messages: readonly Message[], callId: string): { name: string; arguments: string } | undefined {
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const call = m.toolCalls?.find((c) => c.id === callId);
    if (call) return call.function;
  }
  return undefined;
}

/** For servers that do not name pending calls: local tool calls without a result. */
function unansweredLocalCalls(messages: readonly Message[], tools: ReadonlyMap<string, AITool>): string[] {
  const answered = new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  return messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).filter((c) => tools.has(c.function.name) && !answered.has(c.id)).map((c) => c.id) : []));
}

/** An AG-UI message as Skein messages (reasoning and activity messages are the remote's own display). */
function toChatMessages(m: Message): ChatMessage[] {
  if (m.role === 'assistant') {
    const contents: AIContent[] = [];
    if (m.content) contents.push({ kind: 'text', text: m.content });
    for (const c of m.toolCalls ?? []) contents.push({ kind: 'function-call', callId: c.id, name: c.function.name, arguments: c.function.arguments });
    return contents.length ? [{ role: 'assistant', contents, messageId: m.id, ...(m.name ? { authorName: m.name } : {}) }] : [];
  }
  if (m.role === 'tool') return [{ role: 'tool', contents: [resultFromAgUi(m)], messageId: m.id }];
  if (m.role === 'user') return [{ role: 'user', contents: typeof m.content === 'string' ? [{ kind: 'text', text: m.content }] : m.content.map((p) => ({ kind: 'text' as const, text: p.type === 'text' ? p.text : `[${p.type}]` })), messageId: m.id }];
  if (m.role === 'system' || m.role === 'developer') return [{ role: 'system', contents: [{ kind: 'text', text: m.content }], messageId: m.id }];
  return [];
}

/** A streamed event as a Skein update: text deltas, finished tool calls, tool results. */
function toUpdate(event: BaseEvent, seen: readonly BaseEvent[]): AgentRunResponseUpdate | undefined {
  switch (event.type) {
    case EventType.TEXT_MESSAGE_CONTENT:
      return { text: String(event.delta), contents: [{ kind: 'text', text: String(event.delta) }], role: 'assistant', messageId: String(event.messageId) };
    case EventType.TOOL_CALL_END: {
      const start = seen.find((e) => e.type === EventType.TOOL_CALL_START && e.toolCallId === event.toolCallId);
      const args = seen.filter((e) => e.type === EventType.TOOL_CALL_ARGS && e.toolCallId === event.toolCallId).map((e) => String(e.delta)).join('');
      return { text: '', contents: [{ kind: 'function-call', callId: String(event.toolCallId), name: String(start?.toolCallName ?? ''), arguments: args }], role: 'assistant' };
    }
    case EventType.TOOL_CALL_RESULT:
      return { text: '', contents: [{ kind: 'function-result', callId: String(event.toolCallId), result: typeof event.content === 'string' ? event.content : JSON.stringify(event.content) }], role: 'tool' };
    default:
      return undefined;
  }
}
