import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  Agent,
  AgentsClient,
  UpdateAgentOptionalParams,
  RunsCreateRunOptionalParams,
  ThreadMessageOptions,
  ThreadRun,
  ToolDefinitionUnion,
  ToolOutput,
} from '@azure/ai-agents';
// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import {
  AbortError,
  type AIContent,
  type ChatClient,
  type ChatMessage,
  type ChatOptions,
  type ChatResponse,
  type ChatResponseUpdate,
  ConfigurationError,
  agentsOfDefinition,
  type DefinedAgentService,
  definitionTags,
  provisionDefinedAgent,
  type FunctionResultContent,
  NotFoundError,
  type ServiceThreadFork,
  SkeinError,
  type ThreadKind,
  toolResultsNote,
  toolResultsNoteMetadata,
  functionResultText,
  whenAborted,
} from 'skein';
import { isRestError } from './azure-peers.js';
import { type BoundAgent, FOUNDRY_RUN_OPTIONS, foundryRunOptions, toFunctionTool } from './foundry-run-options.js';
import { requiredCalls, runError, RunEventTranslator, usageOf } from './run-event-translator.js';
import { foundryMessageDrafts, foundryMessages } from './foundry-message-content.js';
import { listEveryPage } from './foundry-paging.js';
import { foundryFinishedCount, foundryThreadMessages, seededFoundryThread } from './foundry-thread-history.js';
import { FoundryRunTimeoutError, listAll, reportCredentialFailures, toSkeinError } from './azure-ai-agents-errors.js';

export const AZURE_AI_AGENTS_CLIENT_ID = 'azure-ai-agents';

/** A Foundry agent to create on first use. Skein's function tools are added to `tools`. */
export interface FoundryAgentDefinition {
  model: string;
  name?: string;
  description?: string;
  /** Defaults to the Skein agent's instructions. */
  instructions?: string;
  /** Service-side tools (code interpreter, file search, ...), kept beside Skein's function tools. */
  tools?: ToolDefinitionUnion[];
  temperature?: number;
  topP?: number;
  metadata?: Record<string, string>;
}

/** What to do when a new turn finds a run of an earlier turn still active on the thread. */
export type ActiveRunPolicy = 'cancel' | 'wait';

export interface AzureAIAgentsChatClientOptions {
  /** The SDK client: `new AgentsClient(endpoint, credential, options)`. */
  client: AgentsClient;
  /** An existing Foundry agent to run. Per call, `additionalProperties.agentId` wins. */
  agentId?: string;
  /** Or a definition: the Foundry agent is created on first use (see `getAgentId`). */
  definition?: FoundryAgentDefinition;
  /** Between polls of a run. Default 500 ms. */
  pollIntervalMs?: number;
  /** A run still going after this long is cancelled and fails with FoundryRunTimeoutError. Default 10 minutes. */
  runTimeoutMs?: number;
  /** Default `cancel`: an orphaned run (from an aborted or crashed turn) is cancelled; `wait` lets a queued or running one finish first. */
  activeRun?: ActiveRunPolicy;
  providerId?: string;
}

export { FOUNDRY_RUN_OPTIONS };

/**
 * Run metadata key holding a tag Skein gives each run it creates: when the caller aborts after the
 * service created the run but before its id came back, the run is found by this tag and cancelled.
 */
export const RUN_TAG_METADATA_KEY = 'skein_run';


const ACTIVE_STATUSES = new Set(['queued', 'in_progress', 'requires_action', 'cancelling']);
const RUNNING_STATUSES = new Set(['queued', 'in_progress', 'cancelling']);
const DEFAULT_POLL_INTERVAL_MS = 500;
/** The largest page the agents list serves. */
const DEFAULT_RUN_TIMEOUT_MS = 10 * 60_000;

/** Where a model call starts: a new run on the thread, or the pending run taking tool outputs. */
interface RunStart {
  threadId: string;
  agent: BoundAgent;
  /** Set when the call carries tool results for a run in `requires_action`. */
  pendingRunId?: string;
  outputs?: ToolOutput[];
  runOptions: RunsCreateRunOptionalParams;
  /** The new run's tag (its `skein_run` metadata). */
  tag?: string;
}

/** What an abort has to stop: the run by id, or (its id not known yet) by tag. */
interface RunInFlight {
  threadId?: string;
  runId?: string;
  tag?: string;
  /** The request that creates the run was sent. */
  requested: boolean;
}

/**
 * Foundry Agents on the official `@azure/ai-agents` SDK. History lives in Foundry threads (the
 * AgentThread's `serviceThreadId`). One call = messages added, a run created and polled; when the
 * run needs tool outputs the function calls are returned, and the next call (carrying the
 * results) submits them to that run. Stateless: the pending run is found on the thread itself.
 */
export class AzureAIAgentsChatClient implements ChatClient {
  readonly providerId: string;
  readonly threadKind: ThreadKind = 'service';
  readonly client: AgentsClient;
  readonly pollIntervalMs: number;
  readonly runTimeoutMs: number;
  readonly activeRun: ActiveRunPolicy;
  readonly #agentId: string | undefined;
  readonly #definition: FoundryAgentDefinition | undefined;
  #bound: Promise<BoundAgent> | undefined;
  readonly #boundById = new Map<string, Promise<BoundAgent>>();

  constructor(options: AzureAIAgentsChatClientOptions) {
    if (!options?.client) throw new ConfigurationError('AzureAIAgentsChatClient needs `client`: new AgentsClient(endpoint, credential).');
    if (options.agentId !== undefined && options.definition !== undefined) {
      throw new ConfigurationError('Give AzureAIAgentsChatClient either `agentId` (an existing Foundry agent) or `definition` (one to create), not both.');
    }
    this.client = options.client;
    reportCredentialFailures(options.client);
    this.#agentId = options.agentId;
    this.#definition = options.definition;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.runTimeoutMs = options.runTimeoutMs ?? DEFAULT_RUN_TIMEOUT_MS;
    this.activeRun = options.activeRun ?? 'cancel';
    this.providerId = options.providerId ?? AZURE_AI_AGENTS_CLIENT_ID;
  }

  /** The Foundry agent id, creating the agent from its definition if that has not happened yet. */
  async getAgentId(options: ChatOptions = {}): Promise<string> {
    return (await this.#agent(options)).id;
  }

  /**
   * Deletes the Foundry agent (never done implicitly; threads are not touched): the configured
   * `agentId`, or every Foundry agent made from a definition of this name (found on the service,
   * so a process that never ran the agent deletes it too).
   */
  async deleteAgent(options: { signal?: AbortSignal } = {}): Promise<void> {
    try {
      const ids = new Set<string>();
      if (this.#agentId !== undefined) ids.add(this.#agentId);
      else {
        if (this.#bound) ids.add((await this.#bound).id);
        if (this.#definition?.name !== undefined) {
          const key = definitionTags(this.#definition.name, undefined).key;
          for (const agent of await agentsOfDefinition(this.#agentService(options.signal), key)) ids.add(agent.id);
        }
      }
      for (const id of ids) {
        await this.client.deleteAgent(id, { abortSignal: options.signal });
        this.#boundById.delete(id);
      }
      this.#bound = undefined;
    } catch (error) {
      throw toSkeinError(this.providerId, error, options.signal);
    }
  }

  /** The thread's messages, every page, oldest first (see foundry-thread-history.ts). */
  async getServiceThreadMessages(serviceThreadId: string, options: { signal?: AbortSignal } = {}): Promise<ChatMessage[]> {
    try {
      return await foundryThreadMessages(this.client, serviceThreadId, options.signal);
    } catch (error) {
      throw toSkeinError(this.providerId, error, options.signal);
    }
  }

  /**
   * A new Foundry thread seeded with the first `count` messages, never with a turn the thread's
   * newest run has not finished (one waiting for an approval); the original is untouched.
   */
  async forkServiceThread(serviceThreadId: string, options: { count: number; messages: readonly ChatMessage[]; signal?: AbortSignal }): Promise<ServiceThreadFork> {
    try {
      const count = Math.min(options.count, await foundryFinishedCount(this.client, serviceThreadId, options.messages, options.signal));
      return { serviceThreadId: await seededFoundryThread(this.client, options.messages.slice(0, count), options.signal) };
    } catch (error) {
      throw toSkeinError(this.providerId, error, options.signal);
    }
  }

  async deleteServiceThread(serviceThreadId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    try {
      await this.client.threads.delete(serviceThreadId, { abortSignal: options.signal });
    } catch (error) {
      throw toSkeinError(this.providerId, error, options.signal);
    }
  }

  async getResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    const signal = options.signal;
    const inFlight: RunInFlight = { requested: false };
    try {
      const start = await this.#prepare(messages, options);
      const threadId = start.threadId;
      Object.assign(inFlight, { threadId, runId: start.pendingRunId, tag: start.tag, requested: true });
      let run = start.pendingRunId
        ? await this.client.runs.submitToolOutputs(threadId, start.pendingRunId, start.outputs!, { abortSignal: signal })
        : await this.client.runs.create(threadId, start.agent.id, { ...start.runOptions, abortSignal: signal });
      inFlight.runId = run.id;
      run = await this.#poll(run, signal);
      if (start.pendingRunId && options.toolChoice === 'none' && run.status === 'requires_action') return await this.#stopAtToolLimit(run);
      return await this.#toResponse(run, start.agent, signal);
    } catch (error) {
      if (signal?.aborted) await this.#cancelInFlight(inFlight);
      throw this.#toError(error, signal, options.conversationId);
    }
  }

  getStreamingResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Observable<ChatResponseUpdate> {
    return new RxObservable<ChatResponseUpdate>((subscriber) => {
      const controller = new AbortController();
      const outer = options.signal;
      const unlink = whenAborted(outer, () => controller.abort(outer?.reason));
      const inFlight: RunInFlight = { requested: false };
      let settled = false;
      let events: AsyncDisposable | undefined;
      // The SDK does not end an event stream it already receives when the signal aborts, so
      // teardown disposes of it and cancels the run itself.
      const stop = () => {
        if (settled) return;
        settled = true;
        controller.abort(new AbortError('The stream was unsubscribed.'));
        if (events) Promise.resolve(events[Symbol.asyncDispose]()).catch(() => {});
        void this.#cancelInFlight(inFlight);
      };

      (async () => {
        const start = await this.#prepare(messages, { ...options, signal: controller.signal });
        const threadId = start.threadId;
        Object.assign(inFlight, { threadId, runId: start.pendingRunId, tag: start.tag, requested: true });
        const stream = start.pendingRunId
          ? await this.client.runs.submitToolOutputs(threadId, start.pendingRunId, start.outputs!, { abortSignal: controller.signal }).stream()
          : await this.client.runs.create(threadId, start.agent.id, { ...start.runOptions, abortSignal: controller.signal }).stream();
        events = stream;
        if (settled) {
          stop();
          return;
        }
        const translator = new RunEventTranslator(this.providerId, threadId, start.agent.id);
        for await (const event of stream) {
          if (subscriber.closed) return;
          if (event.event === 'thread.run.created') inFlight.runId = (event.data as ThreadRun).id;
          const { updates, done } = translator.next(event);
          for (const update of updates) subscriber.next(update);
          if (done) break;
        }
        if (subscriber.closed) return;
        settled = true;
        const last = translator.finish();
        if (last.kind === 'requires_action') this.#cancelOnAbort(outer, threadId, last.runId);
        subscriber.complete();
      })().catch((error: unknown) => {
        if (controller.signal.aborted) stop();
        settled = true;
        if (!subscriber.closed) subscriber.error(this.#toError(error, controller.signal, options.conversationId));
      });

      return () => {
        unlink();
        stop();
      };
    });
  }

  /** A 404 on a thread the caller named is almost always that thread being gone: say so. */
  #toError(error: unknown, signal: AbortSignal | undefined, threadId: string | undefined): Error {
    const mapped = toSkeinError(this.providerId, error, signal);
    if (!(mapped instanceof NotFoundError) || threadId === undefined || mapped.message.includes(threadId)) return mapped;
    return new NotFoundError(
      this.providerId,
      `${mapped.message} (Foundry thread ${threadId}: it may have been deleted; start a new thread with agent.getNewThread()).`,
      { status: mapped.status, requestId: mapped.requestId, cause: error },
    );
  }

  /** Thread, agent and the run's overrides; on a new turn also the active-run check and the new messages. */
  async #prepare(messages: readonly ChatMessage[], options: ChatOptions): Promise<RunStart> {
    const signal = options.signal;
    const results = functionResults(messages);
    // Checked before any request: content Foundry cannot carry fails the turn with nothing sent.
    const drafts = foundryMessageDrafts(messages);
    const agent = await this.#agent(options);
    let note: ThreadMessageOptions | undefined;
    if (results.length > 0) {
      const threadId = options.conversationId;
      if (threadId === undefined) {
        throw new SkeinError('Tool results were given without the Foundry thread they belong to (ChatOptions.conversationId).');
      }
      const pending = await this.#findPendingRun(threadId, results, signal);
      // The run still waits, nothing else was said and every call it asked for has its output
      // (the service takes a round's outputs all at once): the outputs go to it, as it expects.
      const answered = new Set(results.map((r) => r.callId));
      if (pending && drafts.length === 0 && requiredCalls(pending).every((c) => answered.has(c.callId))) {
        this.#forgetPendingRun(pending.id);
        return { threadId, agent, pendingRunId: pending.id, outputs: results.map(toToolOutput), runOptions: {} };
      }
      // The run expired (or was cancelled) while the user decided, the user sent a new message with
      // the answer, or some of its calls have no output here: a waiting run takes no message, so it
      // is cancelled below and a new run reads the results as a note first (docs/azure-ai-agents.md).
      if (pending) this.#forgetPendingRun(pending.id);
      note = { role: 'user', content: toolResultsNote(results), metadata: toolResultsNoteMetadata() };
    }
    // The turn's messages go with the run (additionalMessages), not posted first: a run that
    // fails to be created leaves nothing of the turn on the thread.
    const additionalMessages = [...(note ? [note] : []), ...foundryMessages(drafts, agent.tools)];
    const threadId = options.conversationId ?? (await this.client.threads.create({ abortSignal: signal })).id;
    if (options.conversationId !== undefined) await this.#settleActiveRun(threadId, signal);
    const systemText = messages.filter((m) => m.role === 'system').map((m) => textOf(m.contents));
    const runOptions = foundryRunOptions(agent, options, systemText);
    if (additionalMessages.length > 0) runOptions.additionalMessages = additionalMessages;
    const tag = randomUUID();
    runOptions.metadata = { ...runOptions.metadata, [RUN_TAG_METADATA_KEY]: tag };
    return { threadId, agent, runOptions, tag };
  }

  /**
   * The bound Foundry agent, in this order: the per-call `additionalProperties.agentId`; the agent
   * a resumed thread was made with (its continuation; if that agent was deleted, the configured
   * one); the configured `agentId`; else the agent of the definition (see `#fromDefinition`).
   */
  #agent(options: ChatOptions): Promise<BoundAgent> {
    const perCall = options.additionalProperties?.agentId;
    if (typeof perCall === 'string') return this.#byId(perCall, options.signal);
    const recorded = options.conversationId !== undefined ? recordedAgentId(options) : undefined;
    if (recorded !== undefined && recorded !== this.#agentId) {
      return this.#byId(recorded, options.signal).catch((error: unknown) =>
        isRestError(error) && error.statusCode === 404 ? this.#configured(options) : Promise.reject(error),
      );
    }
    return this.#configured(options);
  }

  #configured(options: ChatOptions): Promise<BoundAgent> {
    if (this.#agentId !== undefined) return this.#byId(this.#agentId, options.signal);
    const definition = this.#definition;
    if (!definition) {
      return Promise.reject(
        new ConfigurationError(`No Foundry agent for ${this.providerId}: give the client an \`agentId\` or a \`definition\`, or set \`agentId\` in the agent config.`),
      );
    }
    if (!this.#bound) {
      this.#bound = this.#fromDefinition(definition, options).then(boundAgent);
      this.#bound.catch(() => (this.#bound = undefined));
    }
    return this.#bound;
  }

  #byId(id: string, signal: AbortSignal | undefined): Promise<BoundAgent> {
    let bound = this.#boundById.get(id);
    if (!bound) {
      bound = this.client.getAgent(id, { abortSignal: signal }).then(boundAgent);
      bound.catch(() => this.#boundById.delete(id));
      this.#boundById.set(id, bound);
    }
    return bound;
  }

  /**
   * Definitions are idempotent: the Foundry agent made from a definition carries its tags
   * (metadata `skein_definition`: its name, `skein_fingerprint`: what it was made from), so the
   * same definition finds that agent in every process, a changed one updates it in place, and
   * only when none exists is one created (see `provisionDefinedAgent`).
   */
  async #fromDefinition(definition: FoundryAgentDefinition, options: ChatOptions): Promise<Agent> {
    const signal = options.signal;
    const fields = {
      name: definition.name,
      description: definition.description,
      instructions: definition.instructions ?? options.instructions,
      tools: [...(definition.tools ?? []), ...(options.tools ?? []).map(toFunctionTool)],
      temperature: definition.temperature,
      topP: definition.topP,
    };
    const tags = definitionTags(definition.name, { model: definition.model, ...fields, metadata: definition.metadata });
    return provisionDefinedAgent(this.#agentService(signal, (t) => ({ model: definition.model, ...fields, metadata: { ...definition.metadata, ...t } })), tags);
  }

  /** The project's agents as provisioning sees them; `body` is what create and update send. */
  #agentService(signal: AbortSignal | undefined, body: (tags: Readonly<Record<string, string>>) => AgentBody = () => ({ model: '' })): DefinedAgentService<Agent> {
    return {
      listAll: () => this.#allAgents(signal),
      facts: (agent) => ({ id: agent.id, createdAt: agent.createdAt.getTime(), metadata: agent.metadata }),
      create: (tags) => {
        const { model, ...rest } = body(tags);
        return this.client.createAgent(model, { ...rest, abortSignal: signal });
      },
      update: (id, tags) => this.client.updateAgent(id, { ...body(tags), abortSignal: signal }),
      delete: async (id) => {
        await this.client.deleteAgent(id, { abortSignal: signal });
      },
    };
  }

  /** Every agent of the project, all pages. */
  #allAgents(signal: AbortSignal | undefined): Promise<Agent[]> {
    return listEveryPage((o) => this.client.listAgents({ order: 'asc', abortSignal: signal, ...o }));
  }

  /** Polls until the run needs tool outputs or has ended; past the timeout the run is cancelled. */
  async #poll(run: ThreadRun, signal: AbortSignal | undefined): Promise<ThreadRun> {
    const deadline = Date.now() + this.runTimeoutMs;
    while (RUNNING_STATUSES.has(run.status)) {
      if (Date.now() >= deadline) {
        await this.#cancelQuietly(run.threadId, run.id);
        throw new FoundryRunTimeoutError(
          this.providerId, run.threadId, run.id, 'timeout', undefined,
          `Foundry run ${run.id} on thread ${run.threadId} was still "${run.status}" after ${this.runTimeoutMs} ms; it was cancelled. Raise runTimeoutMs for long runs.`,
        );
      }
      await sleep(this.pollIntervalMs, undefined, { signal });
      run = await this.client.runs.get(run.threadId, run.id, { abortSignal: signal });
    }
    return run;
  }

  async #toResponse(run: ThreadRun, agent: BoundAgent, signal: AbortSignal | undefined): Promise<ChatResponse> {
    const status = run.status as string;
    const base = { conversationId: run.threadId, responseId: run.id, modelId: run.model, continuation: { agentId: agent.id, runId: run.id } };
    if (status === 'requires_action') {
      const calls = requiredCalls(run);
      this.#cancelOnAbort(signal, run.threadId, run.id);
      return { ...base, messages: [{ role: 'assistant', contents: calls, messageId: run.id }], finishReason: 'tool_calls', usage: usageOf(run) };
    }
    if (status === 'completed' || status === 'incomplete') {
      const messages: ChatMessage[] = [];
      const listed = await listEveryPage((o) => this.client.messages.list(run.threadId, { runId: run.id, order: 'asc', abortSignal: signal, ...o }));
      for (const m of listed) {
        if (m.role !== 'assistant') continue;
        messages.push({ role: 'assistant', contents: outputContents(m.content), messageId: m.id, createdAt: m.createdAt.toISOString() });
      }
      return { ...base, messages, finishReason: status === 'completed' ? 'stop' : 'incomplete', usage: usageOf(run) };
    }
    throw runError(this.providerId, run);
  }

  /**
   * A run's tool choice cannot change once it started, so when the tool loop asks for an answer
   * without tools (its round limit) and the run still wants calls, the run is cancelled and the
   * turn ends on the submitted results instead of leaving the run waiting.
   */
  async #stopAtToolLimit(run: ThreadRun): Promise<ChatResponse> {
    await this.#cancelQuietly(run.threadId, run.id);
    return { messages: [], conversationId: run.threadId, responseId: run.id, finishReason: 'tool_calls' };
  }

  /** The run in `requires_action` that asked for these calls (newest runs first); none when it expired or was cancelled. */
  async #findPendingRun(threadId: string, results: FunctionResultContent[], signal: AbortSignal | undefined): Promise<ThreadRun | undefined> {
    const wanted = new Set(results.map((r) => r.callId));
    for (const run of await listAll((o) => this.client.runs.list(threadId, { order: 'desc', limit: 20, abortSignal: signal, ...o }), 20)) {
      if (run.status !== 'requires_action') continue;
      if (requiredCalls(run).some((c) => wanted.has(c.callId))) return run;
    }
    return undefined;
  }

  /** An active run of an earlier turn blocks new messages: cancel it (or wait for it) first. */
  async #settleActiveRun(threadId: string, signal: AbortSignal | undefined): Promise<void> {
    let latest = await this.#newestRun(threadId, signal);
    if (!latest || !ACTIVE_STATUSES.has(latest.status)) return;
    if (this.activeRun === 'cancel' || latest.status === 'requires_action') {
      if (latest.status !== 'cancelling') await this.#cancelQuietly(threadId, latest.id);
      latest = await this.client.runs.get(threadId, latest.id, { abortSignal: signal });
    }
    await this.#poll(latest, signal);
  }

  async #newestRun(threadId: string, signal?: AbortSignal): Promise<ThreadRun | undefined> {
    const [newest] = await listAll((o) => this.client.runs.list(threadId, { order: 'desc', limit: 1, abortSignal: signal, ...o }), 1);
    return newest;
  }

  /** If the caller aborts while the tool loop runs the calls, the waiting run is cancelled. */
  #cancelOnAbort(signal: AbortSignal | undefined, threadId: string, runId: string): void {
    if (!signal) return;
    // Removed again when the next call of the turn submits the outputs (#forgetPendingRun).
    const unlink = whenAborted(signal, () => void this.#cancelQuietly(threadId, runId));
    this.#pendingCancels.get(runId)?.();
    this.#pendingCancels.set(runId, unlink);
  }

  readonly #pendingCancels = new Map<string, () => void>();

  /**
   * After an abort: cancels the run of the call. Its id may not have come back (the service
   * created the run, the reply was still on its way; or a stream ended before
   * `thread.run.created`): then the thread's newest runs are searched for the call's tag.
   */
  async #cancelInFlight(inFlight: RunInFlight): Promise<void> {
    const { threadId, runId, tag } = inFlight;
    if (threadId === undefined || !inFlight.requested) return;
    if (runId !== undefined) return this.#cancelQuietly(threadId, runId);
    try {
      const newest = await listAll((o) => this.client.runs.list(threadId, { order: 'desc', limit: 5, ...o }), 5);
      const run = newest.find((r) => r.metadata?.[RUN_TAG_METADATA_KEY] === tag);
      if (run && ACTIVE_STATUSES.has(run.status) && run.status !== 'cancelling') await this.#cancelQuietly(threadId, run.id);
    } catch {
      // The thread is gone or the service unreachable: no run of this call can go on there.
    }
  }

  async #cancelQuietly(threadId: string, runId: string): Promise<void> {
    try {
      await this.client.runs.cancel(threadId, runId);
    } catch {
      // Already ended (or the service is unreachable): nothing more to stop.
    }
  }

  /** The run gets its outputs now: from here an abort cancels it through the call that submits them. */
  #forgetPendingRun(runId: string): void {
    this.#pendingCancels.get(runId)?.();
    this.#pendingCancels.delete(runId);
  }
}

/** What creating or updating a definition's agent sends. */
type AgentBody = Pick<UpdateAgentOptionalParams, 'name' | 'description' | 'instructions' | 'tools' | 'temperature' | 'topP' | 'metadata'> & { model: string };

/** The Foundry agent id a service thread's continuation recorded (ChatAgent passes it back). */
function recordedAgentId(options: ChatOptions): string | undefined {
  const continuation = options.additionalProperties?.continuation as { agentId?: unknown } | undefined;
  return typeof continuation?.agentId === 'string' ? continuation.agentId : undefined;
}

function boundAgent(agent: Agent): BoundAgent {
  return { id: agent.id, model: agent.model, instructions: agent.instructions ?? undefined, tools: agent.tools ?? [] };
}

function functionResults(messages: readonly ChatMessage[]): FunctionResultContent[] {
  const results: FunctionResultContent[] = [];
  for (const m of messages) for (const c of m.contents) if (c.kind === 'function-result') results.push(c);
  return results;
}

function toToolOutput(result: FunctionResultContent): ToolOutput {
  return { toolCallId: result.callId, output: functionResultText(result) };
}

function textOf(contents: readonly AIContent[]): string {
  let text = '';
  for (const c of contents) if (c.kind === 'text') text += c.text;
  return text;
}

function outputContents(content: readonly { type: string }[]): AIContent[] {
  const out: AIContent[] = [];
  for (const part of content) {
    if (part.type === 'text') out.push({ kind: 'text', text: (part as unknown as { text: { value: string } }).text.value });
  }
  return out;
}
