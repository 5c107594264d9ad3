import type OpenAI from 'openai';
import { AgentThread, type ChatMessage, expandToolResultsNotes, type JsonObject, isFinishedRunStatus, toMessages, unfinishedTurnStart } from 'skein';
import { AssistantRunTimeoutError } from './openai-assistant-errors.js';
import { call, OPENAI_ASSISTANTS_CLIENT_ID, pause } from './openai-assistant-calls.js';
import { type OpenAIThreadCreationOptions, parseExecutionOptions, readThreadState, THREAD_STATE_KEY, toolResources, updateThreadState } from './openai-assistant-definition.js';
import { deleteFilesQuietly, fromThreadMessage, planThreadMessage, planThreadMessages, sendablePlan } from './openai-assistant-messages.js';

export interface OpenAIAssistantPollingOptions {
  /** Wait between polls when the service sends no `openai-poll-after-ms` hint. Default 500. */
  intervalMs?: number;
  /** The longest a run may stay queued / in progress before it is cancelled. Default 10 minutes. */
  timeoutMs?: number;
}

/** Run statuses that end on their own (the run is still working). */
export const WAITING = new Set(['queued', 'in_progress', 'cancelling']);

/**
 * The thread operations of an assistant agent: assistant threads on the service and the
 * AgentThreads that name them. The agent checks usability and compatibility before calling.
 */
export class AssistantThreadOperations {
  constructor(
    private readonly client: OpenAI,
    private readonly agentName: string | undefined,
    private readonly polling: Required<OpenAIAssistantPollingOptions>,
  ) {}

  /** A new, unstarted thread; the assistant thread is created on its first run. */
  newThread(): AgentThread {
    return new AgentThread({ origin: { provider: OPENAI_ASSISTANTS_CLIENT_ID, agent: this.agentName } });
  }

  /**
   * Creates the assistant thread now, with its own messages, metadata, tool resources and run
   * defaults. Messages are checked before any request; their files are uploaded first.
   */
  async create(options: OpenAIThreadCreationOptions, signal: AbortSignal | undefined, assistantId: string | undefined): Promise<AgentThread> {
    const state: JsonObject = {};
    if (options.executionOptions) {
      state[THREAD_STATE_KEY] = { executionOptions: parseExecutionOptions(options.executionOptions, 'executionOptions') as JsonObject };
    }
    const plan = planThreadMessages(options.messages ?? [], 'messages');
    const { messages, uploaded } = await sendablePlan(this.client, plan, signal);
    const remote = await call(
      () =>
        this.client.beta.threads.create(
          { messages: messages.length ? messages : undefined, metadata: options.metadata, tool_resources: toolResources(options.codeInterpreterFileIds, options.vectorStoreIds) },
          { signal },
        ),
      signal,
    ).catch(async (error: unknown) => {
      await deleteFilesQuietly(this.client, uploaded);
      throw error;
    });
    const thread = new AgentThread({ origin: { provider: OPENAI_ASSISTANTS_CLIENT_ID, agent: this.agentName }, serviceThreadId: remote.id, state });
    updateThreadState(thread, { assistantId, ...(uploaded.length ? { uploadedFileIds: uploaded } : {}) });
    return thread;
  }

  /** The assistant thread id, creating the remote thread on a thread's first run (made with `assistantId`). */
  async ensure(thread: AgentThread, signal: AbortSignal | undefined, assistantId?: string): Promise<string> {
    if (thread.serviceThreadId !== undefined) return thread.serviceThreadId;
    const remote = await call(() => this.client.beta.threads.create({}, { signal }), signal);
    thread.setServiceThreadId(remote.id);
    if (assistantId !== undefined && readThreadState(thread.state).assistantId === undefined) updateThreadState(thread, { assistantId });
    return remote.id;
  }

  /** Files uploaded for the thread's messages are deleted with it. */
  recordUploads(thread: AgentThread, fileIds: readonly string[]): void {
    if (!fileIds.length) return;
    const known = readThreadState(thread.state).uploadedFileIds ?? [];
    updateThreadState(thread, { uploadedFileIds: [...known, ...fileIds] });
  }

  /** Deletes the assistant thread on the service (the assistant stays), and the files Skein uploaded for it. */
  async delete(thread: AgentThread): Promise<void> {
    const id = thread.serviceThreadId;
    if (id === undefined) return;
    await call(() => this.client.beta.threads.delete(id));
    await deleteFilesQuietly(this.client, readThreadState(thread.state).uploadedFileIds ?? []);
  }

  /** Adds a message to the thread without running the assistant; it is checked before any request. */
  async addMessage(thread: AgentThread, message: ChatMessage | string): Promise<void> {
    const [m] = toMessages(message);
    const plan = [planThreadMessage(m!, 'message')];
    const threadId = await this.ensure(thread, undefined);
    const { messages, uploaded } = await sendablePlan(this.client, plan, undefined);
    await call(() => this.client.beta.threads.messages.create(threadId, messages[0]!)).catch(async (error: unknown) => {
      await deleteFilesQuietly(this.client, uploaded);
      throw error;
    });
    this.recordUploads(thread, uploaded);
  }

  /**
   * Every message of the thread, all pages, oldest first; a tool results note reads as the calls
   * and results it carries (see expandToolResultsNotes).
   */
  async messages(thread: AgentThread, signal: AbortSignal | undefined): Promise<ChatMessage[]> {
    const threadId = thread.serviceThreadId;
    if (threadId === undefined) return [];
    return call(async () => {
      const out: ChatMessage[] = [];
      for await (const m of this.client.beta.threads.messages.list(threadId, { order: 'asc', limit: 100 }, { signal })) out.push(fromThreadMessage(m, this.agentName));
      return expandToolResultsNotes(out);
    }, signal);
  }

  /**
   * How many of `messages` (the thread's history as just read, oldest first) a fork may hold: all
   * of them, unless the thread's newest run has not finished its turn (waiting for tool outputs or
   * an approval, expired, cancelled, failed): then the fork ends before that turn, whose input the
   * history shows while the calls it waits on are run steps it does not (see unfinishedTurnStart).
   */
  async finishedCount(threadId: string, messages: readonly ChatMessage[], signal: AbortSignal | undefined): Promise<number> {
    return call(async () => {
      const newest = (await this.client.beta.threads.runs.list(threadId, { limit: 1, order: 'desc' }, { signal })).data[0];
      if (!newest || isFinishedRunStatus(newest.status)) return messages.length;
      const wrote = new Set<string>();
      for await (const m of this.client.beta.threads.messages.list(threadId, { run_id: newest.id, limit: 100 }, { signal })) wrote.add(m.id);
      return unfinishedTurnStart(messages, wrote);
    }, signal);
  }

  /**
   * A thread takes one run at a time. A run still queued or in progress (another process's turn)
   * is waited for; one stuck in requires_action has nobody to answer it, so it is cancelled.
   * Returns the id of the thread's newest run (undefined when it has none): a run newer than it
   * is one this turn created.
   */
  async settleActiveRun(threadId: string, signal: AbortSignal): Promise<string | undefined> {
    const runs = this.client.beta.threads.runs;
    const page = await call(() => runs.list(threadId, { limit: 1, order: 'desc' }, { signal }), signal);
    let run = page.data[0];
    const newest = run?.id;
    if (!run || !(WAITING.has(run.status) || run.status === 'requires_action')) return newest;
    const deadline = Date.now() + this.polling.timeoutMs;
    while (run.status === 'requires_action' || WAITING.has(run.status)) {
      if (run.status === 'requires_action') run = await call(() => runs.cancel(run!.id, { thread_id: threadId }, { signal }), signal);
      if (!WAITING.has(run.status)) break;
      if (Date.now() >= deadline) throw new AssistantRunTimeoutError(OPENAI_ASSISTANTS_CLIENT_ID, run.id, threadId, run.status, this.polling.timeoutMs);
      await pause(this.polling.intervalMs, signal);
      run = await call(() => runs.retrieve(run!.id, { thread_id: threadId }, { signal }), signal);
    }
    return newest;
  }

  /**
   * After a run-create call whose answer never came back (aborted, or the connection lost) the
   * run may exist on the service all the same, and would answer into the thread unseen. The
   * thread's newest run, when it is newer than `previousRunId`, belongs to `assistantId` and is
   * still going, is that run: it is cancelled. Best effort (the caller's error is what matters);
   * returns the id of the run found.
   */
  async cancelUnacknowledgedRun(threadId: string, previousRunId: string | undefined, assistantId: string): Promise<string | undefined> {
    const runs = this.client.beta.threads.runs;
    try {
      const newest = (await runs.list(threadId, { limit: 1, order: 'desc' })).data[0];
      if (!newest || newest.id === previousRunId || newest.assistant_id !== assistantId) return undefined;
      if (WAITING.has(newest.status) || newest.status === 'requires_action') await runs.cancel(newest.id, { thread_id: threadId });
      return newest.id;
    } catch {
      return undefined;
    }
  }
}

