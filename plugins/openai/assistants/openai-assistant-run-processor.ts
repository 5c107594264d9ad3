import type OpenAI from 'openai';
import type { Subscriber } from 'rxjs';
import {
  AbortError,
  type AIAgent,
  AgentRunResponse,
  type AgentRunOptions,
  type AgentRunResponseUpdate,
  type AgentThread,
  type AITool,
  type ChatMessage,
  ConnectionError,
  type FunctionCallContent,
  type FunctionResultContent,
  type MiddlewarePipeline,
  type ThreadConcurrency,
  approvalRequestsFor,
  functionResultText,
  namingCall,
  partitionByApproval,
  pendingApprovalsOf,
  responseFromUpdates,
  runToolCall,
  settleThreadApprovals,
  splitApprovalAnswers,
  toolMap,
  toolResultsNote,
  toolResultsNoteMetadata,
  withHeldResults,
  withPendingApprovals,
} from 'skein';
import { toSkeinError } from '../openai-errors.js';
import { call, OPENAI_ASSISTANTS_CLIENT_ID, pause, pollHint, throwIfAborted } from './openai-assistant-calls.js';
import {
  functionTool,
  hostedTools,
  mergeExecutionOptions,
  type OpenAIAssistantDefinition,
  type OpenAIAssistantExecutionOptions,
  type OpenAIAssistantInvocationOptions,
  type OpenAIAssistantResponseFormatJson,
  type OpenAIAssistantToolCallBehavior,
  parseResponseFormat,
  readThreadState,
  responseFormatParam,
} from './openai-assistant-definition.js';
import { AssistantRunTimeoutError } from './openai-assistant-errors.js';
import { fromThreadMessage, messageText, planThreadMessage, type PlannedThreadMessage, sendablePlan } from './openai-assistant-messages.js';
import { type AssistantThreadOperations, type OpenAIAssistantPollingOptions, WAITING } from './openai-assistant-threads.js';
import { runError, translateRunEvent, usageOf } from './translate-run-event.js';
import type { LiveRun } from './translate-run-event.js';

export type { LiveRun };

export interface OpenAIAssistantRunOptions extends AgentRunOptions {
  invocationOptions?: OpenAIAssistantInvocationOptions;
}

type Run = OpenAI.Beta.Threads.Run;
type RunCreateParams = OpenAI.Beta.Threads.Runs.RunCreateParamsNonStreaming;
type StreamEvent = OpenAI.Beta.AssistantStreamEvent;
type MessageCreateParams = OpenAI.Beta.Threads.Messages.MessageCreateParams;

/** A turn's input, checked before any request: thread messages to send, system text, the run's response format. */
interface PreparedInput {
  plan: PlannedThreadMessage[];
  system: string[];
  responseFormat: OpenAIAssistantResponseFormatJson | undefined;
}

/** A turn's approval answers, settled: the input left, the note for the new run, and what to record when. */
interface AnsweredApprovals {
  input: ChatMessage[];
  /** The thread message carrying the settled results (none when nothing was pending). */
  note: MessageCreateParams[];
  /** The run carrying the note was created: nothing is pending any more. */
  delivered: () => void;
  /** The turn failed before that: the results are held in the thread, never run again. */
  undelivered: () => void;
}

const FAILED = new Set(['expired', 'failed', 'cancelled', 'incomplete']);

/** The agent as the run processor sees it. */
export interface AssistantRunHost {
  readonly agent: AIAgent;
  readonly client: OpenAI;
  readonly name: string | undefined;
  readonly tools: ReadonlyMap<string, AITool>;
  readonly polling: Required<OpenAIAssistantPollingOptions>;
  readonly concurrency: ThreadConcurrency;
  readonly middleware: MiddlewarePipeline;
  readonly threads: AssistantThreadOperations;
  /** The assistant, created or found on first use. */
  ensureAssistant(): Promise<OpenAIAssistantDefinition>;
  /** A thread for one run alone (deleted after it). */
  throwawayThread(): AgentThread;
  /** Throws when the agent was deleted or the thread is not one of its threads. */
  checkThread(thread: AgentThread): void;
}

/**
 * Turns of an assistant agent: each is a run on the service, polled (or streamed) to its end,
 * with function tool calls answered through the Skein tools and run middleware around it.
 */
export class AssistantRunProcessor {
  constructor(private readonly host: AssistantRunHost) {}

  private get providerId(): string {
    return OPENAI_ASSISTANTS_CLIENT_ID;
  }

  /** One polled turn; `signal` is the turn's own (the caller's linked in). */
  async turn(input: ChatMessage[], options: OpenAIAssistantRunOptions, signal: AbortSignal): Promise<AgentRunResponse> {
    const host = this.host;
    const throwaway = options.thread === undefined;
    const thread = options.thread ?? host.throwawayThread();
    host.checkThread(thread);
    const release = await thread.acquire(options.concurrency ?? host.concurrency);
    let threadId: string | undefined;
    try {
      throwIfAborted(signal);
      const context = { agent: host.agent, thread, messages: input, options, streaming: false };
      const { response } = await host.middleware.runAgent(context, async (messages) => {
        const answered = await this.settleApprovals(thread, messages, this.toolsFor(options), signal);
        try {
          const prepared = prepareInput(answered.input, options);
          const assistant = await host.ensureAssistant();
          threadId = await host.threads.ensure(thread, signal, assistant.id);
          const previousRunId = await host.threads.settleActiveRun(threadId, signal);
          const additional = [...answered.note, ...(await this.upload(thread, prepared, signal))];
          const { params, tools, behavior } = this.runParams(assistant, thread, prepared, additional, options);
          const collected: ChatMessage[] = [];
          const { run, pending } = await this.processRun(thread, threadId, params, tools, behavior.maxToolRounds, signal, (m) => collected.push(m), previousRunId, answered.delivered);
          return new AgentRunResponse(collected, { responseId: run.id, conversationId: threadId, usage: usageOf(run), agentName: host.name, approvalRequests: approvalRequestsFor(pending) });
        } catch (error) {
          answered.undelivered();
          throw error;
        }
      });
      return response;
    } finally {
      release();
      // A throwaway thread is unreachable after the run, so it is cleaned up here.
      if (throwaway && threadId) await host.threads.delete(thread).catch(() => undefined);
    }
  }

  /** One streamed turn; updates go to `subscriber`, `live` tells the teardown what to cancel. */
  async streamTurn(
    input: ChatMessage[],
    options: OpenAIAssistantRunOptions,
    signal: AbortSignal,
    subscriber: Subscriber<AgentRunResponseUpdate>,
    live: LiveRun,
  ): Promise<void> {
    const host = this.host;
    const throwaway = options.thread === undefined;
    const thread = options.thread ?? host.throwawayThread();
    host.checkThread(thread);
    const release = await thread.acquire(options.concurrency ?? host.concurrency);
    const next = (update: AgentRunResponseUpdate) => {
      if (!subscriber.closed) subscriber.next(update);
    };
    try {
      throwIfAborted(signal);
      const context = { agent: host.agent, thread, messages: input, options, streaming: true };
      const streamRun = (messages: ChatMessage[]) =>
        this.streamRun(thread, messages, options, signal, live, next).catch((error: unknown) => {
          if (signal.aborted) throw new AbortError(undefined, { cause: error });
          throw toSkeinError(this.providerId, error, signal);
        });
      await host.middleware.runAgent(context, streamRun, next);
    } catch (error) {
      // A middleware's own error passes as it is, unless the caller aborted.
      if (signal.aborted && !(error instanceof AbortError)) throw new AbortError(undefined, { cause: error });
      throw error;
    } finally {
      release();
      if (throwaway && live.threadId) {
        const id = live.threadId;
        if (live.runId && signal.aborted) await this.cancelQuietly(id, live.runId);
        await host.threads.delete(thread).catch(() => undefined);
      }
    }
  }

  /**
   * The error of a run-create call that failed without naming its run. When it was aborted or
   * the connection was lost, the run may exist all the same: it is found and cancelled first.
   */
  private async unacknowledged(error: unknown, threadId: string, previousRunId: string | undefined, assistantId: string, signal: AbortSignal): Promise<unknown> {
    const failure = toSkeinError(this.providerId, error, signal);
    if (!signal.aborted && !(failure instanceof ConnectionError)) return failure;
    const runId = await this.host.threads.cancelUnacknowledgedRun(threadId, previousRunId, assistantId);
    if (!signal.aborted || runId === undefined) return failure;
    return new AbortError(`The run was aborted before the service named it; remote run ${runId} was found on thread ${threadId} and cancelled.`, { cause: error });
  }

  async cancelQuietly(threadId: string, runId: string): Promise<void> {
    // Best effort: the run may have ended meanwhile; the caller's error is what matters.
    await this.host.client.beta.threads.runs.cancel(runId, { thread_id: threadId }).catch(() => undefined);
  }

  /** Polls a created run to its end, answering requires_action with the tools, emitting completed steps in order. */
  private async processRun(
    thread: AgentThread,
    threadId: string,
    params: RunCreateParams,
    tools: ReadonlyMap<string, AITool>,
    maxToolRounds: number | undefined,
    signal: AbortSignal,
    emit: (message: ChatMessage) => void,
    previousRunId: string | undefined,
    onCreated: () => void,
  ): Promise<{ run: Run; pending: FunctionCallContent[] }> {
    const runs = this.host.client.beta.threads.runs;
    const polling = this.host.polling;
    const created = await call(() => runs.create(threadId, params, { signal }).withResponse(), signal).catch(async (error: unknown) => {
      throw await this.unacknowledged(error, threadId, previousRunId, params.assistant_id, signal);
    });
    onCreated();
    let run = created.data;
    let hint = pollHint(created.response);
    const emitted = new Set<string>();
    const results = new Map<string, FunctionResultContent>();
    const deadline = Date.now() + polling.timeoutMs;
    let rounds = 0;
    try {
      for (;;) {
        while (WAITING.has(run.status)) {
          if (Date.now() >= deadline) {
            await this.cancelQuietly(threadId, run.id);
            throw new AssistantRunTimeoutError(this.providerId, run.id, threadId, run.status, polling.timeoutMs);
          }
          await pause(hint ?? polling.intervalMs, signal);
          const polled = await runs.retrieve(run.id, { thread_id: threadId }, { signal }).withResponse();
          run = polled.data;
          hint = pollHint(polled.response);
        }
        if (FAILED.has(run.status)) throw runError(run);
        await this.emitSteps(run, emitted, results, signal, emit);
        if (run.status === 'completed') return { run, pending: [] };
        // requires_action: every requested call runs (unless it waits for approval), all outputs go back in one call.
        const calls = requiredCalls(run);
        rounds++;
        const { outputs, pending } = await this.answerCalls(calls, tools, maxToolRounds, rounds, thread, signal);
        if (pending.length) {
          await this.stopForApproval(thread, threadId, run.id, pending, calls, outputs);
          const at = new Date().toISOString();
          emit(this.authored({ role: 'assistant', contents: calls, createdAt: at }));
          if (outputs.length) emit({ role: 'tool', contents: outputs, createdAt: at });
          return { run, pending };
        }
        for (const r of outputs) results.set(r.callId, r);
        const submitted = await runs
          .submitToolOutputs(run.id, { thread_id: threadId, tool_outputs: outputs.map((r) => ({ tool_call_id: r.callId, output: functionResultText(r) })) }, { signal })
          .withResponse();
        run = submitted.data;
        hint = pollHint(submitted.response);
      }
    } catch (error) {
      if (signal.aborted) {
        await this.cancelQuietly(threadId, run.id);
        throw new AbortError(`The run was aborted; remote run ${run.id} was cancelled.`, { cause: error });
      }
      throw toSkeinError(this.providerId, error, signal);
    }
  }

  /** Completed steps not yet emitted, oldest first: tool steps as call + result messages, message steps as the message. */
  private async emitSteps(
    run: Run,
    emitted: Set<string>,
    results: Map<string, FunctionResultContent>,
    signal: AbortSignal,
    emit: (message: ChatMessage) => void,
  ): Promise<void> {
    const threadId = run.thread_id;
    const client = this.host.client;
    for await (const step of client.beta.threads.runs.steps.list(run.id, { thread_id: threadId, order: 'asc', limit: 100 }, { signal })) {
      if (step.status !== 'completed' || emitted.has(step.id)) continue;
      emitted.add(step.id);
      const details = step.step_details;
      if (details.type === 'message_creation') {
        const message = await client.beta.threads.messages.retrieve(details.message_creation.message_id, { thread_id: threadId }, { signal });
        emit(fromThreadMessage(message, this.host.name));
        continue;
      }
      const calls: FunctionCallContent[] = [];
      const outs: FunctionResultContent[] = [];
      for (const c of details.tool_calls) {
        if (c.type !== 'function') continue;
        calls.push({ kind: 'function-call', callId: c.id, name: c.function.name, arguments: c.function.arguments });
        outs.push(results.get(c.id) ?? { kind: 'function-result', callId: c.id, result: c.function.output ?? null });
      }
      if (!calls.length) continue;
      const at = new Date(step.created_at * 1000).toISOString();
      emit(this.authored({ role: 'assistant', contents: calls, messageId: step.id, createdAt: at }));
      emit({ role: 'tool', contents: outs, createdAt: at });
    }
  }

  /** One streamed run to its end; resolves with what it streamed, folded (for run middleware). */
  private async streamRun(
    thread: AgentThread,
    input: ChatMessage[],
    options: OpenAIAssistantRunOptions,
    signal: AbortSignal,
    live: LiveRun,
    emit: (update: AgentRunResponseUpdate) => void,
  ): Promise<AgentRunResponse> {
    const host = this.host;
    const updates: AgentRunResponseUpdate[] = [];
    const next = (update: AgentRunResponseUpdate) => {
      updates.push(update);
      emit(update);
    };
    const folded = (pending?: FunctionCallContent[]) => {
      const { messages, usage } = responseFromUpdates(updates);
      return new AgentRunResponse(messages.map((m) => this.authored(m)), {
        responseId: live.runId,
        conversationId: live.threadId,
        usage,
        agentName: host.name,
        approvalRequests: approvalRequestsFor(pending),
      });
    };
    const answered = await this.settleApprovals(thread, input, this.toolsFor(options), signal, next);
    try {
      return await this.streamAnswered(thread, answered, options, signal, live, next, folded);
    } catch (error) {
      answered.undelivered();
      throw error;
    }
  }

  /** The streamed run of a turn whose approval answers are settled. */
  private async streamAnswered(
    thread: AgentThread,
    answered: AnsweredApprovals,
    options: OpenAIAssistantRunOptions,
    signal: AbortSignal,
    live: LiveRun,
    next: (update: AgentRunResponseUpdate) => void,
    folded: (approvalRequests?: FunctionCallContent[]) => AgentRunResponse,
  ): Promise<AgentRunResponse> {
    const host = this.host;
    const prepared = prepareInput(answered.input, options);
    const assistant = await host.ensureAssistant();
    const threadId = await host.threads.ensure(thread, signal, assistant.id);
    live.threadId = threadId;
    const previousRunId = await host.threads.settleActiveRun(threadId, signal);
    const additional = [...answered.note, ...(await this.upload(thread, prepared, signal))];
    const { params, tools, behavior } = this.runParams(assistant, thread, prepared, additional, options);
    const runs = host.client.beta.threads.runs;
    // Until `thread.run.created` names the run, an abort or a lost connection leaves it unknown.
    const unacknowledged = async (error: unknown) => {
      if (live.runId !== undefined) throw error;
      throw await this.unacknowledged(error, threadId, previousRunId, params.assistant_id, signal);
    };
    let stream: AsyncIterable<StreamEvent> = await runs.create(threadId, { ...params, stream: true }, { signal }).catch(unacknowledged);
    answered.delivered();
    let rounds = 0;
    for (;;) {
      let requires: Run | undefined;
      let completed = false;
      try {
        for await (const event of stream) {
          if (signal.aborted) break;
          const outcome = translateRunEvent(event, live, host.name, next);
          if (outcome === 'requires_action') requires = event.data as Run;
          if (outcome === 'completed') completed = true;
        }
        throwIfAborted(signal);
      } catch (error) {
        await unacknowledged(error);
      }
      if (!requires && !completed) {
        // A stream cut short (or a reply that was no event stream) must not pass for a finished turn.
        throw new ConnectionError(this.providerId, `The ${this.providerId} run stream on thread ${threadId} ended before the run did (no completed, requires_action or failure event).`);
      }
      if (!requires) return folded();
      const calls = requiredCalls(requires);
      next({ text: '', role: 'assistant', contents: calls, responseId: requires.id, ...(host.name ? { authorName: host.name } : {}) });
      rounds++;
      const { outputs, pending } = await this.answerCalls(calls, tools, behavior.maxToolRounds, rounds, thread, signal);
      if (outputs.length) next({ text: '', role: 'tool', contents: outputs, responseId: requires.id });
      if (pending.length) {
        await this.stopForApproval(thread, threadId, requires.id, pending, calls, outputs);
        next({ text: '', role: 'assistant', contents: approvalRequestsFor(pending), responseId: requires.id, ...(host.name ? { authorName: host.name } : {}) });
        return folded(pending);
      }
      stream = await runs.submitToolOutputs(
        requires.id,
        { thread_id: threadId, stream: true, tool_outputs: outputs.map((r) => ({ tool_call_id: r.callId, output: functionResultText(r) })) },
        { signal },
      );
    }
  }

  /** Runs the requested calls (each through the approval gate and the function-call middleware); unknown tools are answered as not run. */
  private async invokeTools(calls: FunctionCallContent[], tools: ReadonlyMap<string, AITool>, thread: AgentThread, signal: AbortSignal): Promise<FunctionResultContent[]> {
    const results = await Promise.all(
      calls.map((call) => {
        const tool = tools.get(call.name);
        if (!tool) return notRun(call, `unknown tool "${call.name}"; available tools: ${[...tools.keys()].join(', ') || 'none'}.`);
        return runToolCall({ call, tool, invoke: () => this.invokeOne(call, tool, thread, signal) });
      }),
    );
    throwIfAborted(signal);
    return results;
  }

  private invokeOne(call: FunctionCallContent, tool: AITool, thread: AgentThread, signal: AbortSignal): Promise<FunctionResultContent> {
    return this.host.middleware.callTool({ agent: this.host.agent, thread, call, tool }, () => tool.invoke({ call, signal, thread }));
  }

  /** One round of calls: those that need approval wait (`pending`), the others run; past the round limit none runs. */
  private async answerCalls(
    calls: FunctionCallContent[],
    tools: ReadonlyMap<string, AITool>,
    maxToolRounds: number | undefined,
    rounds: number,
    thread: AgentThread,
    signal: AbortSignal,
  ): Promise<{ outputs: FunctionResultContent[]; pending: FunctionCallContent[] }> {
    if (maxToolRounds !== undefined && rounds > maxToolRounds) {
      return { outputs: calls.map((c) => notRun(c, `not run: the limit of ${maxToolRounds} tool rounds for one run was reached.`)), pending: [] };
    }
    const { runNow, awaitApproval } = partitionByApproval(calls, tools);
    return { outputs: await this.invokeTools(runNow, tools, thread, signal), pending: awaitApproval };
  }

  /**
   * The turn stops to ask the user. The waiting run is cancelled at once: it would expire on the
   * service (about 10 minutes after it was created) long before most answers, and while it waits
   * the thread takes no message. The calls stay pending in the thread's state (they survive
   * serialize and resume); the results of the calls that ran beside them are held there too, and
   * the answer's turn sends them all to a new run (see `settleApprovals`).
   */
  private async stopForApproval(thread: AgentThread, threadId: string, runId: string, pending: FunctionCallContent[], calls: FunctionCallContent[], outputs: FunctionResultContent[]): Promise<void> {
    await this.cancelQuietly(threadId, runId);
    const held = outputs.map((r) => namingCall(r, calls.find((c) => c.callId === r.callId)!));
    thread.state = withHeldResults(withPendingApprovals(thread.state, pending), held);
  }

  /**
   * The turn's approval answers, settled through the approval gate before anything is sent:
   * approved calls run, rejected ones (and, when the user sent a new message instead, unanswered
   * ones) do not. The results reach the model as a note at the head of the new run's messages:
   * the run that asked for them was cancelled, and the service takes tool outputs only for a
   * run in `requires_action`. `delivered` is called once the run carrying the note exists; until
   * then a failed turn keeps the results held in the thread (the calls stay pending), so
   * answering again never runs a tool twice.
   */
  private async settleApprovals(
    thread: AgentThread,
    input: ChatMessage[],
    tools: ReadonlyMap<string, AITool>,
    signal: AbortSignal,
    next?: (update: AgentRunResponseUpdate) => void,
  ): Promise<AnsweredApprovals> {
    const pending = pendingApprovalsOf(thread);
    const { answers, rest } = splitApprovalAnswers(input);
    if (pending.length === 0 && answers.size === 0) return { input, note: [], delivered: () => {}, undelivered: () => {} };
    const { held, settled } = await settleThreadApprovals(thread, answers, tools, (call, tool) => this.invokeOne(call, tool, thread, signal));
    if (settled.length) next?.({ text: '', role: 'tool', contents: settled });
    const results = [...held, ...settled];
    const note: MessageCreateParams = { role: 'user', content: toolResultsNote(results), metadata: toolResultsNoteMetadata() };
    let done = false;
    return {
      input: rest,
      note: [note],
      delivered: () => {
        done = true;
        thread.state = withHeldResults(withPendingApprovals(thread.state, undefined), undefined);
      },
      undelivered: () => {
        if (!done) thread.state = withHeldResults(thread.state, results);
      },
    };
  }

  /** The agent's tools, with the run's own. */
  private toolsFor(options: OpenAIAssistantRunOptions): ReadonlyMap<string, AITool> {
    const ownTools = this.host.tools;
    return options.tools?.length ? new Map([...ownTools, ...toolMap(options.tools)]) : ownTools;
  }

  /** Uploads the input's files (recorded with the thread, deleted with it) and returns the thread messages. */
  private async upload(thread: AgentThread, prepared: PreparedInput, signal: AbortSignal): Promise<MessageCreateParams[]> {
    const { messages, uploaded } = await sendablePlan(this.host.client, prepared.plan, signal);
    this.host.threads.recordUploads(thread, uploaded);
    return messages;
  }

  private runParams(assistant: OpenAIAssistantDefinition, thread: AgentThread, prepared: PreparedInput, additionalMessages: MessageCreateParams[], options: OpenAIAssistantRunOptions) {
    const invocation = options.invocationOptions ?? {};
    const own = readThreadState(thread.state);
    // Precedence: invocation > thread > assistant.
    const merged: OpenAIAssistantExecutionOptions = mergeExecutionOptions(assistant.executionOptions, own.executionOptions, { ...invocation, responseFormat: prepared.responseFormat });
    const additional = [merged.additionalInstructions, ...prepared.system, options.additionalInstructions].filter((s): s is string => !!s);
    const tools = this.toolsFor(options);
    const params: RunCreateParams = {
      // A thread keeps running on the assistant it was made with (recorded in its state).
      assistant_id: own.assistantId ?? assistant.id!,
      model: invocation.model,
      instructions: invocation.instructions,
      additional_instructions: additional.length ? additional.join('\n') : undefined,
      additional_messages: additionalMessages,
      max_prompt_tokens: merged.maxPromptTokens,
      max_completion_tokens: merged.maxCompletionTokens,
      parallel_tool_calls: merged.parallelToolCalls,
      truncation_strategy: merged.truncationMessageCount ? { type: 'last_messages', last_messages: merged.truncationMessageCount } : undefined,
      temperature: merged.temperature,
      top_p: merged.topP,
      metadata: invocation.metadata,
      tool_choice: toolChoice(merged.toolCallBehavior?.toolChoice),
      response_format: responseFormatParam(merged.responseFormat as OpenAIAssistantResponseFormatJson | undefined),
    };
    // Run-scoped tools replace the assistant's tool list for this run only.
    if (options.tools?.length || invocation.enableCodeInterpreter !== undefined || invocation.enableFileSearch !== undefined) {
      params.tools = [
        ...hostedTools(invocation.enableCodeInterpreter ?? assistant.enableCodeInterpreter, invocation.enableFileSearch ?? assistant.enableFileSearch),
        ...[...tools.values()].map((t) => functionTool(t.declaration)),
      ];
    }
    for (const key of Object.keys(params) as (keyof RunCreateParams)[]) if (params[key] === undefined) delete params[key];
    return { params, tools, behavior: merged.toolCallBehavior ?? {} };
  }

  private authored(message: ChatMessage): ChatMessage {
    const name = this.host.name;
    return name !== undefined && message.authorName === undefined ? { ...message, authorName: name } : message;
  }
}

/**
 * Checks a turn's input before any request: every message must fit an assistant thread (system
 * text becomes additional instructions) and the run's response format must be valid.
 */
function prepareInput(input: ChatMessage[], options: OpenAIAssistantRunOptions): PreparedInput {
  const invocation = options.invocationOptions ?? {};
  const extra = [...input.map((m, i) => [m, `input[${i}]`] as const), ...(invocation.additionalMessages ?? []).map((m, i) => [m, `invocationOptions.additionalMessages[${i}]`] as const)];
  return {
    plan: extra.filter(([m]) => m.role !== 'system').map(([m, path]) => planThreadMessage(m, path)),
    system: extra.filter(([m]) => m.role === 'system').map(([m]) => messageText(m)),
    responseFormat: invocation.responseFormat === undefined ? undefined : parseResponseFormat(invocation.responseFormat, 'invocationOptions.responseFormat'),
  };
}

function requiredCalls(run: Run): FunctionCallContent[] {
  return (run.required_action?.submit_tool_outputs.tool_calls ?? []).map((c) => ({ kind: 'function-call', callId: c.id, name: c.function.name, arguments: c.function.arguments }));
}

function notRun(c: FunctionCallContent, error: string): FunctionResultContent {
  return { kind: 'function-result', callId: c.callId, error };
}

function toolChoice(choice: OpenAIAssistantToolCallBehavior['toolChoice']): RunCreateParams['tool_choice'] {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}
