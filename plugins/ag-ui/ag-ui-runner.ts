import type { BaseEvent, Interrupt, Message, RunAgentInput, Tool } from '@ag-ui/core';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import {
  type AIAgent,
  type AITool,
  type AgentRunResponseUpdate,
  type AgentThread,
  type ChatOptions,
  type ChatMessage,
  type FunctionCallContent,
  type FunctionResultContent,
  type JsonValue,
  type SerializedThread,
  waitingApprovalsOf,
} from 'skein';
import type { AgUiContextInstructions, AgUiForwardedProps, AgUiRunOptions } from './ag-ui-context.js';
import { AgUiForkError, AgUiRequestError } from './ag-ui-errors.js';
import { AgUiEventMapper, applyMessageEvents } from './ag-ui-event-mapper.js';
import { toAgUiView } from './ag-ui-messages.js';
import { EventType } from './ag-ui-peers.js';
import { type AgUiDurable, type AgUiDurableRun, streamDurableRun } from './ag-ui-durable.js';
import { PredictedState, predictStateEvent, type AgUiPredictState } from './ag-ui-predict-state.js';
import { type ReconcilePlan, isFork, isInput, reconcile } from './ag-ui-reconcile.js';
import { agUiStateOf, setAgUiState } from './ag-ui-state.js';
import type { AgUiThreadStore, StoredAgUiThread } from './ag-ui-thread-store.js';
import { jsonDiff, sameJson } from './json-patch.js';

/** Where the server reports failures (with the error id sent to the client) and notices. */
export interface AgUiServerLogger {
  warn(message: string): void;
  error(message: string, error: unknown): void;
}

export const defaultAgUiServerLogger: AgUiServerLogger = {
  warn: (message) => process.emitWarning(message, { type: 'SkeinAgUiWarning', code: 'SKEIN_AG_UI_WARNING' }),
  error: (message, error) => console.error(message, error),
};

/** One run, checked and reconciled with the stored thread, ready to stream. */
export interface PreparedRun {
  input: RunAgentInput;
  stored: StoredAgUiThread | undefined;
  owner: string;
  thread: AgentThread;
  /** The stored history as the client sees it (before any fork). */
  view: Message[];
  plan: ReconcilePlan;
  /** What the server's `forwardedProps` hook made of the client's `forwardedProps`. */
  runOptions?: AgUiRunOptions;
  /** A durable agent's run on this thread that has not finished (saved with the record). */
  durableRun?: AgUiDurableRun;
  /** This request reads that run on (a rejoin, or a client with nothing new while it goes on). */
  readOn: boolean;
}

const ABORT_GRACE_MS = 5000;
/** How many recently saved threads a runner keeps as objects (a bounded cache in front of the store). */
const LIVE_THREADS = 1000;
const THREAD_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

/**
 * Runs AG-UI requests on one Skein agent: `prepare` loads the thread and reconciles the client's
 * messages with it (refusing bad requests before any event is sent), `execute` streams the run.
 * Callers hold the thread's turn lock around both.
 */
export class AgUiRunner {
  /** Threads this runner saved last, by threadId, with the version saved: reused while the store still holds that version. */
  readonly #live = new Map<string, { version: number; thread: AgentThread }>();

  constructor(
    readonly name: string,
    readonly agent: AIAgent,
    private readonly threads: AgUiThreadStore,
    private readonly logger: AgUiServerLogger,
    private readonly keepPartial: boolean,
    private readonly contextInstructions: AgUiContextInstructions = false,
    private readonly predictState: readonly AgUiPredictState[] = [],
    private readonly forwardedProps?: AgUiForwardedProps,
    private readonly durable?: AgUiDurable,
  ) {}

  async prepare(input: RunAgentInput, owner: string): Promise<PreparedRun> {
    if (!THREAD_ID.test(input.threadId)) {
      throw new AgUiRequestError(400, `"threadId" must be 1 to 200 letters, digits, "_", ".", ":" or "-"; found ${JSON.stringify(input.threadId)}.`);
    }
    const stored = await this.threads.load(input.threadId);
    if (stored && (stored.owner !== owner || stored.agent !== this.name)) {
      // Another user's thread (or another agent's) is not there for this caller.
      throw new AgUiRequestError(404, `No thread "${input.threadId}" for agent "${this.name}"; start a new thread with a new threadId.`);
    }
    const thread = stored ? await this.#threadOf(input.threadId, stored) : this.agent.getNewThread();
    const { view, source } = await this.#view(thread, stored);
    const durableRun = this.durable ? stored?.durableRun : undefined;
    const rejoinPlan = (): ReconcilePlan => ({ kept: Math.min(durableRun?.kept ?? view.length, view.length), input: [], results: [], answers: [] });
    // A client back for a durable run it left (the same runId, or the runId of the request that answered it; no answers): it reads the run on; its list may lack what the run added.
    const rejoin = durableRun !== undefined && (durableRun.runId === input.runId || durableRun.answeredBy === input.runId) && !input.resume?.length;
    let plan = rejoin ? rejoinPlan() : reconcile({ view, source, client: input.messages, resume: input.resume ?? [], waiting: stored ? waitingApprovalsOf(thread) : [] });
    // The durable run goes on (not waiting for an answer; the stored thread may still show the calls it waited on once answered).
    const goesOn = durableRun !== undefined && (durableRun.answeredBy !== undefined || waitingApprovalsOf(thread).length === 0);
    // Any client with nothing new (another tab, a reload) reads it on as well, rather than a thread the run has not written yet.
    const readOn = goesOn && (rejoin || (isIdle(plan) && !isFork(plan)));
    if (readOn && !rejoin) plan = rejoinPlan();
    const runOptions = this.#runOptionsOf(input, owner);
    if (this.durable && input.tools.length) {
      throw new AgUiRequestError(400, `Agent "${this.name}" runs durably, and a durable run takes no per-run tools: send "tools": [] (found ${input.tools.map((t) => t.name).join(', ')}), or serve the agent without durability for frontend tools.`);
    }
    return { input, stored, owner, thread, view, plan, readOn, ...(runOptions ? { runOptions } : {}), ...(stored?.durableRun ? { durableRun: stored.durableRun } : {}) };
  }

  /** The server's `forwardedProps` hook, run before any event: what it refuses is a 400 with its message. */
  #runOptionsOf(input: RunAgentInput, owner: string): AgUiRunOptions | undefined {
    if (!this.forwardedProps) return undefined;
    try {
      return this.forwardedProps(input.forwardedProps, { threadId: input.threadId, runId: input.runId, user: owner });
    } catch (error) {
      if (error instanceof AgUiRequestError) throw error;
      throw new AgUiRequestError(400, `"forwardedProps" was refused: ${error instanceof Error ? error.message : String(error)}.`);
    }
  }

  /** Streams the run to `send`, from RUN_STARTED to RUN_FINISHED or RUN_ERROR; never throws. */
  async execute(run: PreparedRun, send: (event: BaseEvent) => void, signal: AbortSignal): Promise<void> {
    const { input, plan } = run;
    send({ type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId, ...(input.parentRunId ? { parentRunId: input.parentRunId } : {}) });
    let thread = run.thread;
    let branches = run.stored?.branches;
    let known = run.view.slice(0, plan.kept);
    try {
      if (isFork(plan)) {
        const before = await thread.serialize();
        // A signal of its own, for many requests: the OpenAI SDK leaves a listener per request on the signal it gets (a service fork reads the history page by page).
        const forkSignal = AbortSignal.any([signal]);
        setMaxListeners(0, forkSignal);
        const at = plan.forkAt ?? (await this.#serviceForkIndex(thread, plan.forkAfterInputs!, forkSignal));
        const shared = agUiStateOf(thread);
        thread = at < 0 ? this.agent.getNewThread() : await this.agent.forkThread(thread, { at, signal: forkSignal });
        // A cut before any message is a new thread here (not agent.forkThread): the shared state goes with it, as forkThread keeps it.
        if (shared !== undefined && agUiStateOf(thread) === undefined) setAgUiState(thread, shared);
        branches = [...(branches ?? []), before];
      }
      const storedState = agUiStateOf(thread);
      const stateBefore = this.#applyClientState(thread, input.state);
      if (!sameJson(stateBefore, input.state)) send({ type: EventType.STATE_SNAPSHOT, snapshot: stateBefore ?? {} });
      const frontend = new Map(input.tools.map((t) => [t.name, t]));
      // A durable run the client comes back to (or another client with nothing new while it goes on) is read on, not idle.
      const reconnect = run.readOn;
      const idle = isIdle(plan) && !reconnect;
      if (idle) {
        // Nothing to answer: the client connected (or reloaded). It gets the thread as it is.
        if (!sameIds(known, input.messages)) send({ type: EventType.MESSAGES_SNAPSHOT, messages: known });
        // A read writes only what it changed: a new thread's owner, a fork, the client's new state.
        if (!run.stored || isFork(plan) || !sameJson(stateBefore, storedState)) await this.#save(run, thread, branches, known);
        else this.#live.set(input.threadId, { version: run.stored.version, thread });
        send(this.#finished(input, thread, frontend, undefined));
        return;
      }
      if (isFork(plan) && !sameIds(known, input.messages.slice(0, plan.kept))) send({ type: EventType.MESSAGES_SNAPSHOT, messages: known });
      const mapper = new AgUiEventMapper();
      const emitted: BaseEvent[] = [];
      /** The model call (durable deltas) each emitted event came from, by index in `emitted`. */
      const modelCallOf: (string | undefined)[] = [];
      /** The state the client last saw (the thread's, or ahead of it by a prediction). */
      let state = agUiStateOf(thread);
      const emit = (event: BaseEvent, modelCall?: string) => {
        emitted.push(event);
        modelCallOf.push(modelCall);
        send(event);
      };
      const sendState = (next: JsonValue | undefined) => {
        const delta = jsonDiff(state ?? {}, next ?? {});
        state = next;
        if (delta.length) send({ type: EventType.STATE_DELTA, delta });
      };
      const flushState = () => {
        const now = agUiStateOf(thread);
        if (now !== state) sendState(now);
      };
      const predicted = this.predictState.length ? new PredictedState(this.predictState, waitingApprovalsOf(thread)) : undefined;
      if (predicted) send(predictStateEvent(this.predictState));
      /** The thread's state before this round's tools ran: a key a tool wrote itself is not overwritten by a prediction. */
      let beforeTools = state;
      const newMessages = plan.input;
      known = [...known, ...run.input.messages.filter((m) => newMessages.some((n) => n.messageId === m.id) || plan.results.some((r) => r.additionalProperties?.agUiMessageId === m.id))];
      if (reconnect && run.durableRun?.kept !== undefined) {
        // A rejoin reads the run from its start: the client first gets the history as it was before the run, whatever it kept of a cut read.
        known = [...known, ...(run.durableRun.input ?? [])];
        if (!sameIds(known, input.messages)) emit({ type: EventType.MESSAGES_SNAPSHOT, messages: known });
      }
      try {
        const onUpdate = (update: AgentRunResponseUpdate, modelCall?: string) => {
          if (update.role !== 'tool') beforeTools = agUiStateOf(thread);
          else if (predicted) for (const c of update.contents) if (c.kind === 'function-result' && c.error === undefined) settlePrediction(thread, predicted.settled(c.callId), beforeTools);
          for (const event of mapper.map(update)) {
            emit(event, modelCall);
            const values = predicted?.predict(event);
            if (values) sendState(withKeys(state, values));
            if (event.type === EventType.TOOL_CALL_RESULT) flushState();
          }
        };
        const additionalInstructions = this.#instructionsOf(input, run.runOptions);
        if (this.durable) {
          const startState = agUiStateOf(thread);
          const outcome = await streamDurableRun({
            durable: this.durable,
            agent: this.agent,
            thread,
            input: plan.input,
            answers: plan.answers,
            run: run.durableRun,
            runId: input.runId,
            signal,
            ...(run.runOptions?.chatOptions ? { chatOptions: run.runOptions.chatOptions } : {}),
            ...(additionalInstructions ? { additionalInstructions } : {}),
            // Saved at once, so a client that reconnects (or another instance) finds the run.
            onStart: async (started) => {
              run.durableRun = { ...started, kept: plan.kept, input: known.slice(plan.kept) };
              await this.#save(run, thread, branches, known);
            },
            onAnswered: async (answered) => {
              run.durableRun = { ...answered, answeredBy: input.runId };
              await this.#save(run, thread, branches, known);
            },
            onUpdate,
            // AG-UI cannot take back streamed text: the re-made call's messages replace the cut one's through a MESSAGES_SNAPSHOT (docs/ag-ui.md).
            onRetract: (modelCall) => {
              if (!modelCallOf.includes(modelCall)) return;
              for (const event of mapper.restart()) emit(event, modelCall);
              for (let i = emitted.length - 1; i >= 0; i--) {
                if (modelCallOf[i] !== modelCall) continue;
                emitted.splice(i, 1);
                modelCallOf.splice(i, 1);
              }
              emit({ type: EventType.MESSAGES_SNAPSHOT, messages: applyMessageEvents(known, emitted) });
            },
            // A failed run is over: the record stops pointing at it, so a later read is a plain read, not the failure again.
            onFailed: () => {
              run.durableRun = undefined;
            },
          });
          // The thread is the one the run left (its state kept, as a durable run's shared state is its thread's).
          const local = agUiStateOf(thread);
          thread = outcome.thread;
          setAgUiState(thread, durableFinalState(startState, local, agUiStateOf(thread)));
          // Waiting: a rejoin reads on after `after`, so what the client holds before it is everything known now.
          run.durableRun = outcome.kind === 'waiting' ? { runId: run.durableRun!.runId, ...(outcome.after !== undefined ? { after: outcome.after } : {}), kept: applyMessageEvents(known, emitted).length, input: [] } : undefined;
        } else {
          await this.#stream(thread, plan, frontend, run.runOptions?.chatOptions, additionalInstructions, signal, onUpdate);
        }
      } finally {
        for (const event of mapper.finish()) emit(event);
      }
      flushState();
      known = applyMessageEvents(known, emitted);
      if (mapper.madeUpIds && thread.messageStore) {
        // Updates without ids: the stored messages have others; the client gets the stored ones.
        const fresh = toAgUiView(await thread.messageStore.listMessages()).messages;
        if (!sameIds(fresh, known)) send({ type: EventType.MESSAGES_SNAPSHOT, messages: fresh });
        known = fresh;
      }
      await this.#save(run, thread, branches, known);
      send(this.#finished(input, thread, frontend, mapper));
    } catch (error) {
      // What the agent kept of a failed turn (an approved call's result) must outlive the request.
      await this.#save(run, thread, branches, known).catch(() => undefined);
      if (signal.aborted) return; // the client left: nobody reads a RUN_ERROR
      const errorId = randomUUID();
      this.logger.error(`AG-UI run ${input.runId} on thread ${input.threadId} (agent "${this.name}") failed [error id ${errorId}]`, error);
      send({ type: EventType.RUN_ERROR, message: `The agent could not complete this run (error id ${errorId}).`, code: errorId });
    }
  }

  /** Runs the agent, passing each update on; resolves when the run completed, rejects when it failed or was aborted. */
  #stream(
    thread: AgentThread,
    plan: ReconcilePlan,
    frontend: ReadonlyMap<string, Tool>,
    chatOptions: ChatOptions | undefined,
    additionalInstructions: string | undefined,
    signal: AbortSignal,
    onUpdate: (update: Parameters<AgUiEventMapper['map']>[0]) => void,
  ): Promise<void> {
    const results = new Map(plan.results.map((r) => [r.callId, r]));
    const tools = frontendTools(frontend, results, waitingApprovalsOf(thread));
    const answers = [...plan.answers, ...plan.results.map((r) => ({ kind: 'function-approval-response' as const, callId: r.callId, approved: true }))];
    const input: ChatMessage[] = answers.length ? [{ role: 'user', contents: answers }, ...plan.input] : plan.input;
    return new Promise<void>((resolve, reject) => {
      // The signal aborts the run (the agent leaves the thread whole and the stream errors), so the
      // turn lock is released only once the agent is done with the thread.
      const subscription = this.agent.runStream(input, { thread, tools, signal, keepPartial: this.keepPartial, ...(chatOptions ? { chatOptions } : {}), ...(additionalInstructions ? { additionalInstructions } : {}) }).subscribe({ next: onUpdate, error: reject, complete: resolve });
      // An agent that ignores the signal is unsubscribed (which aborts a cold stream) after a grace period.
      const onAbort = () => {
        setTimeout(() => {
          if (subscription.closed) return;
          subscription.unsubscribe();
          reject(signal.reason instanceof Error ? signal.reason : new Error('The client disconnected.'));
        }, ABORT_GRACE_MS).unref();
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The client's `context` (and the forwardedProps hook's instructions) as this run's extra instructions (never stored). */
  #instructionsOf(input: RunAgentInput, runOptions: AgUiRunOptions | undefined): string | undefined {
    const context = this.contextInstructions && input.context.length ? this.contextInstructions(input.context) : undefined;
    const parts = [context, runOptions?.additionalInstructions].filter((p): p is string => !!p);
    return parts.length ? parts.join('\n\n') : undefined;
  }

  /** The client's `state` is the run's state; an empty one from a client that has none keeps the stored state. Returns the state the run starts with. */
  #applyClientState(thread: AgentThread, clientState: unknown): JsonValue | undefined {
    const stored = agUiStateOf(thread);
    const empty = clientState === undefined || clientState === null || (typeof clientState === 'object' && !Array.isArray(clientState) && Object.keys(clientState).length === 0);
    if (empty && stored !== undefined) return stored;
    if (clientState !== undefined) setAgUiState(thread, clientState as JsonValue);
    return agUiStateOf(thread);
  }

  /**
   * The stored thread, deserialized, or the object this runner saved it from when the store still
   * holds that version (the store stays the only source: another instance's save changes the
   * version, and the thread is read again).
   */
  async #threadOf(threadId: string, stored: StoredAgUiThread): Promise<AgentThread> {
    const cached = this.#live.get(threadId);
    this.#live.delete(threadId);
    if (cached && cached.version === stored.version) return cached.thread;
    return this.agent.deserializeThread(stored.thread);
  }

  /**
   * Where a service thread forks: just before its (inputs+1)-th user or system message, read
   * from the service's history (whose indexes `forkThread` takes); -1 when nothing is kept.
   */
  async #serviceForkIndex(thread: AgentThread, inputs: number, signal: AbortSignal): Promise<number> {
    const { messages, source } = toAgUiView(await this.agent.getMessages(thread, { signal }));
    let seen = 0;
    for (let i = 0; i < messages.length; i++) {
      if (!isInput(messages[i]!)) continue;
      if (seen === inputs) return source[i]! - 1;
      seen++;
    }
    throw new AgUiForkError(thread.serviceThreadId, inputs, seen);
  }

  async #view(thread: AgentThread, stored: StoredAgUiThread | undefined): Promise<{ view: Message[]; source?: number[] }> {
    if (!stored) return { view: [], source: [] };
    if (thread.messageStore) {
      const { messages, source } = toAgUiView(await thread.messageStore.listMessages());
      return { view: messages, source };
    }
    return { view: stored.transcript ?? [] };
  }

  async #save(run: PreparedRun, thread: AgentThread, branches: SerializedThread[] | undefined, known: Message[]): Promise<void> {
    const serialized = await thread.serialize();
    const version = await this.threads.save(
      run.input.threadId,
      { agent: this.name, owner: run.owner, thread: serialized, ...(branches?.length ? { branches } : {}), ...(thread.messageStore ? {} : { transcript: known }), ...(run.durableRun ? { durableRun: run.durableRun } : {}) },
      run.stored?.version,
    );
    // A run may save more than once (a durable run: when it starts, and when it ends here).
    if (run.stored) run.stored.version = version;
    else run.stored = { agent: this.name, owner: run.owner, thread: serialized, version };
    this.#live.set(run.input.threadId, { version, thread });
    if (this.#live.size > LIVE_THREADS) this.#live.delete(this.#live.keys().next().value!);
  }

  /** RUN_FINISHED: an interrupt for calls waiting on approval, else success naming the frontend calls the client must answer. */
  #finished(input: RunAgentInput, thread: AgentThread, frontend: ReadonlyMap<string, Tool>, mapper: AgUiEventMapper | undefined): BaseEvent {
    const waiting = waitingApprovalsOf(thread);
    const pendingTools = waiting.filter((c) => frontend.has(c.name));
    const approvals = waiting.filter((c) => !frontend.has(c.name));
    const usage = mapper?.usage;
    const base = { type: EventType.RUN_FINISHED, threadId: input.threadId, runId: input.runId, ...(usage ? { usage } : {}) };
    if (approvals.length) return { ...base, outcome: { type: 'interrupt', interrupts: approvals.map(interruptOf) } };
    return { ...base, outcome: { type: 'success', ...(pendingTools.length ? { pendingToolCallIds: pendingTools.map((c) => c.callId) } : {}) } };
  }
}

function interruptOf(call: FunctionCallContent): Interrupt {
  return {
    id: call.callId,
    reason: 'tool_approval',
    message: `The agent wants to call ${call.name} with ${call.arguments || '{}'}. Approve it?`,
    toolCallId: call.callId,
    responseSchema: { type: 'object', properties: { approved: { type: 'boolean' }, reason: { type: 'string' } } },
  };
}

/**
 * The client's tools as Skein tools for this run: a call to one stops the run (like a call that
 * needs approval) and stays open until the client sends its result; `results` are the results
 * the client sent, which the calls return when they are settled.
 */
function frontendTools(tools: ReadonlyMap<string, Tool>, results: ReadonlyMap<string, FunctionResultContent>, waiting: readonly FunctionCallContent[]): AITool[] {
  const declared = new Map(tools);
  // A waiting call whose tool the client no longer lists is still answered by its result.
  for (const call of waiting) if (!declared.has(call.name) && [...results.values()].some((r) => r.callId === call.callId)) declared.set(call.name, { name: call.name, description: '' });
  return [...declared.values()].map(
    (t): AITool => ({
      declaration: { name: t.name, description: t.description, parameters: (t.parameters as Record<string, JsonValue> | undefined) ?? { type: 'object', properties: {} } },
      requiresApproval: true,
      invoke: async ({ call }) => results.get(call.callId) ?? { kind: 'function-result', callId: call.callId, error: `the client did not return a result for ${t.name}.` },
    }),
  );
}

/** `state` with `values` at its top-level keys (a state that is not an object is replaced). */
function withKeys(state: JsonValue | undefined, values: Record<string, JsonValue>): JsonValue {
  const base = typeof state === 'object' && state !== null && !Array.isArray(state) ? state : {};
  return { ...base, ...values };
}

/** The value of a top-level key of a state (none when the state is not an object). */
function keyOf(state: JsonValue | undefined, key: string): JsonValue | undefined {
  return typeof state === 'object' && state !== null && !Array.isArray(state) ? state[key] : undefined;
}

/** A watched call succeeded: its predicted keys become the thread's state, except those its tool wrote itself. */
function settlePrediction(thread: AgentThread, values: Record<string, JsonValue> | undefined, beforeTools: JsonValue | undefined): void {
  if (!values) return;
  const now = agUiStateOf(thread);
  const untouched = Object.fromEntries(Object.entries(values).filter(([key]) => sameJson(keyOf(now, key), keyOf(beforeTools, key))));
  if (Object.keys(untouched).length) setAgUiState(thread, withKeys(now, untouched));
}

/**
 * A durable run's final state. Its tools ran in the workflow, on the run's thread (`ran`); the
 * predictions of its watched calls that succeeded were settled here, on the request's thread
 * (`local`). So: the run's state, with each key the settled predictions changed from `start`
 * where the run left that key as it started (a tool that wrote its key itself wins, as in a
 * plain run). A run that kept no state takes the request's.
 */
function durableFinalState(start: JsonValue | undefined, local: JsonValue | undefined, ran: JsonValue | undefined): JsonValue | undefined {
  if (ran === undefined) return local;
  const settled = typeof local === 'object' && local !== null && !Array.isArray(local) ? Object.entries(local).filter(([key, value]) => !sameJson(value, keyOf(start, key)) && sameJson(keyOf(ran, key), keyOf(start, key))) : [];
  return settled.length ? withKeys(ran, Object.fromEntries(settled)) : ran;
}

/** Nothing to answer: no new message, tool result or approval answer (a fork may still be one). */
function isIdle(plan: ReconcilePlan): boolean {
  return plan.input.length === 0 && plan.results.length === 0 && plan.answers.length === 0;
}

function sameIds(a: readonly Message[], b: readonly Message[]): boolean {
  const x = a.filter((m) => m.role !== 'activity' && m.role !== 'reasoning');
  const y = b.filter((m) => m.role !== 'activity' && m.role !== 'reasoning');
  return x.length === y.length && x.every((m, i) => m.id === y[i]!.id);
}
