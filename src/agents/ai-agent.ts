import type { Observable } from 'rxjs';
import type { ChatOptions } from '../clients/chat-options.js';
import { ForkUnsupportedError, HistoryUnavailableError } from '../errors/skein-error.js';
import type { AgentInput, ChatMessage } from '../messages/chat-message.js';
import type { ForkThreadOptions, GetMessagesOptions } from '../threads/thread-history.js';
import type { AgentThread, ThreadConcurrency } from '../threads/agent-thread.js';
import type { AITool } from '../tools/ai-tool.js';
import type { AgentRunResponse, AgentRunResponseUpdate } from './agent-run-response.js';
import type { RunSteps } from './run-steps.js';

export interface AgentRunOptions {
  /** The conversation to continue; without one the run uses a throwaway thread. */
  thread?: AgentThread;
  signal?: AbortSignal;
  /** Extra tools for this run only. */
  tools?: readonly AITool[];
  /** Model options for this run (model, temperature, ...); they win over the agent's. */
  chatOptions?: ChatOptions;
  maxToolIterations?: number;
  concurrency?: ThreadConcurrency;
  /**
   * Instructions for this run only, after the agent's own (and its context providers'): what a
   * front end knows about the page the user is on, say. Never stored in the thread. Honoured by
   * ChatAgent (and so AzureAIAgent), OpenAIAssistantAgent (`additional_instructions`) and AgUiAgent
   * (sent as an AG-UI `context` item); A2AAgent ignores it.
   */
  additionalInstructions?: string;
  /**
   * When the run is aborted or fails after assistant text arrived, a message-store thread records
   * the input and that text as one assistant message marked `additionalProperties.partial`
   * (tool calls without a result are dropped); the error still rejects the run and carries the
   * message as `error.partial`. Off by default (the thread is unchanged). Service threads: the
   * service decides what it keeps; nothing changes locally.
   */
  keepPartial?: boolean;
  /**
   * Set by a durable runner (`skein/dbos`): the model calls, tool calls and the append of the
   * turn go through it, so each can be recorded. Not for everyday use.
   */
  steps?: RunSteps;
}

/**
 * An agent: stateless, so one instance serves any number of conversations. All conversation
 * state is in the AgentThread passed to each run.
 */
export abstract class AIAgent {
  abstract readonly name: string | undefined;
  abstract readonly description: string | undefined;
  abstract getNewThread(): AgentThread;
  abstract run(input: AgentInput, options?: AgentRunOptions): Promise<AgentRunResponse>;
  abstract runStream(input: AgentInput, options?: AgentRunOptions): Observable<AgentRunResponseUpdate>;
  /** Reads a serialized thread (untrusted JSON) back, checking it fits this agent. */
  abstract deserializeThread(serialized: unknown): Promise<AgentThread>;
  /** Deletes the thread's history: on the service for service threads, in the store otherwise. */
  abstract deleteThread(thread: AgentThread): Promise<void>;

  /**
   * The conversation of `thread` as messages, oldest first, whoever keeps it (see
   * docs/history.md). `limit` keeps the newest N; `before` (an index or a messageId) pages back.
   * An agent whose service keeps no readable history throws HistoryUnavailableError.
   *
   * @example
   * ```ts
   * const last10 = await agent.getMessages(thread, { limit: 10 });
   * ```
   */
  async getMessages(thread: AgentThread, _options?: GetMessagesOptions): Promise<ChatMessage[]> {
    throw new HistoryUnavailableError(thread.origin.provider, `Agent "${this.name ?? thread.origin.provider}" cannot read the history of its threads.`);
  }

  /**
   * A new, independent thread holding the history of `thread` up to and including message `at`
   * (an index or a messageId; default: all of it). The original is never changed. A fork never
   * separates a function call from its results and never ends in an unfinished turn (one waiting
   * for approval, or a partial reply): it ends before that turn. Agents that cannot fork their
   * threads throw ForkUnsupportedError before creating anything.
   *
   * @example
   * ```ts
   * const branch = await agent.forkThread(thread, { at: 3 });
   * await agent.run('Try another way', { thread: branch });
   * ```
   */
  async forkThread(thread: AgentThread, _options?: ForkThreadOptions): Promise<AgentThread> {
    throw new ForkUnsupportedError(thread.origin.provider, `Agent "${this.name ?? thread.origin.provider}" cannot fork its threads.`);
  }
}
