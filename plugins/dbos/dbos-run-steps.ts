import { randomUUID } from 'node:crypto';
import {
  type AITool,
  type AgentRunResponseUpdate,
  type ChatMessage,
  type ChatMessageStore,
  type ChatResponse,
  type FunctionApprovalRequestContent,
  type FunctionCallContent,
  type FunctionResultContent,
  type RunSteps,
  type UsageDetails,
  addUsage,
} from 'skein';
import { DeltaWriter } from './dbos-delta-writer.js';
import { DBOS } from './dbos-peers.js';
import { toStreamUpdate, UPDATES_STREAM } from './dbos-stream.js';

/** Marks the first message of a turn a durable run appended: `<runId>#<turn>`. */
export const DURABLE_TURN_KEY = 'durableTurn';

/** What a tool that opted out of recording leaves in checkpoints and in the run's stream. */
export const UNRECORDED_RESULT = '[not recorded: the tool opted out of durable recording]';

export interface DbosRunStepsOptions {
  runId: string;
  /** The turn within the run (a run that waited for approvals has several). */
  turn: number;
  unrecordedTools: ReadonlySet<string>;
  /** `messages`: each whole reply after its step; `deltas`: the deltas as they arrive (the workflow runs agent.runStream). */
  stream: 'off' | 'messages' | 'deltas';
  /** Set on the assistant messages of the rebuilt turn, as ChatAgent does. */
  agentName?: string;
}

/** A turn as `agent.run` returns it: what the workflow needs of it. */
export interface DurableTurn {
  messages: ChatMessage[];
  usage?: UsageDetails;
  approvalRequests: FunctionApprovalRequestContent[];
}

/**
 * The DBOS side of the RunSteps seam, for one turn of one run inside its workflow: a model call
 * and a tool call are each one step (their results recorded, so a replay never repeats them), the
 * append of the turn a step that checks the thread for the turn's key first, so it lands once.
 */
export class DbosRunSteps implements RunSteps {
  readonly #options: DbosRunStepsOptions;
  #modelCalls = 0;
  /** The writer of the model step running now (deltas mode); undefined between model calls and on replay. */
  #writer: DeltaWriter | undefined;
  // The turn rebuilt from the steps and the run's updates (deltas mode; see turn()).
  readonly #produced: ChatMessage[] = [];
  readonly #localRequests: FunctionApprovalRequestContent[] = [];
  #usage: UsageDetails | undefined;
  /** Calls whose result invokeTool wrote to the stream. */
  readonly #shown = new Set<string>();
  /** Results the agent made without running a tool (a declined approval: deltas mode), for the stream before the next model call. */
  readonly #unshown: FunctionResultContent[] = [];

  constructor(options: DbosRunStepsOptions) {
    this.#options = options;
  }

  async callModel(call: () => Promise<ChatResponse>): Promise<ChatResponse> {
    const { stream, turn } = this.#options;
    // A reader sees a declined call's result as it sees a tool's, before the reply to it.
    if (this.#unshown.length) await DBOS.writeStream(UPDATES_STREAM, toStreamUpdate({ role: 'tool', contents: this.#unshown.splice(0) }));
    const id = `${turn}.${this.#modelCalls++}`;
    // Stamped inside the step, so a replay sees the times the first run recorded.
    const response = await DBOS.runStep(
      async () => {
        if (stream !== 'deltas') return stampCreatedAt(await call());
        // A new attempt id per execution: a call re-made after a crash tells readers to drop the cut one.
        const writer = new DeltaWriter({ id, attempt: randomUUID() }, (update) => DBOS.writeStream(UPDATES_STREAM, update));
        this.#writer = writer;
        let response: ChatResponse;
        try {
          response = stampCreatedAt(await call());
        } catch (error) {
          this.#writer = undefined;
          // The deltas that came are written (a reader saw the call fail mid-way); the call's error wins.
          await writer.close().catch(() => {});
          throw error;
        }
        this.#writer = undefined;
        // Every delta is in the stream before the step is recorded: a replay writes none again.
        await writer.close();
        return response;
      },
      { name: 'skein.model' },
    );
    // Written by the workflow after the step, so a replayed model call never writes its reply twice.
    if (stream === 'messages') for (const message of response.messages) await DBOS.writeStream(UPDATES_STREAM, toStreamUpdate(message));
    if (stream === 'deltas') {
      const name = this.#options.agentName;
      this.#produced.push(...(name === undefined ? response.messages : response.messages.map((m) => (m.role === 'assistant' && m.authorName === undefined ? { ...m, authorName: name } : m))));
      this.#usage = addUsage(this.#usage, response.usage);
    }
    return response;
  }

  /**
   * An update of the agent's runStream (deltas mode). During a live model step it is a delta for
   * the stream; otherwise it tells the turn what agent.run would have returned: a tool message,
   * the agent's own approval requests, or the messages of a run middleware that answered alone.
   */
  observe(update: AgentRunResponseUpdate): void {
    if (this.#writer) return this.#writer.add(update);
    if (update.role === 'tool') {
      for (const c of update.contents) if (c.kind === 'function-result' && !this.#shown.has(c.callId)) this.#unshown.push(c);
      // Results of approved calls settled before the first model call belong to the turn's input.
      if (this.#modelCalls > 0) this.#produced.push({ role: 'tool', contents: update.contents, createdAt: new Date().toISOString() });
      return;
    }
    if (update.contents.length > 0 && update.contents.every((c) => c.kind === 'function-approval-request')) {
      this.#localRequests.push(...(update.contents as FunctionApprovalRequestContent[]));
      return;
    }
    if (this.#modelCalls === 0) this.#produced.push({ role: update.role ?? 'assistant', contents: update.contents, ...(update.messageId !== undefined ? { messageId: update.messageId } : {}) });
  }

  /** The turn, rebuilt (deltas mode): model replies from their steps, tool messages and requests from the updates. */
  turn(): DurableTurn {
    const surfaced = this.#produced.flatMap((m) => m.contents.filter((c): c is FunctionApprovalRequestContent => c.kind === 'function-approval-request'));
    return { messages: this.#produced, usage: this.#usage, approvalRequests: [...this.#localRequests, ...surfaced] };
  }

  async invokeTool(call: FunctionCallContent, tool: AITool, invoke: (idempotencyKey: string) => Promise<FunctionResultContent>): Promise<FunctionResultContent> {
    const key = `${this.#options.runId}:${call.callId}`;
    const recorded = !this.#options.unrecordedTools.has(tool.declaration.name);
    const result = recorded ? await DBOS.runStep(() => invoke(key), { name: `skein.tool:${tool.declaration.name}` }) : await invoke(key);
    if (this.#options.stream !== 'off') {
      const shown = recorded ? result : redacted(result);
      this.#shown.add(call.callId);
      await DBOS.writeStream(UPDATES_STREAM, toStreamUpdate({ role: 'tool', contents: [shown] }));
    }
    return result;
  }

  async appendTurn(store: ChatMessageStore, messages: readonly ChatMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const key = `${this.#options.runId}#${this.#options.turn}`;
    const [first, ...rest] = messages;
    const marked: ChatMessage = { ...first!, additionalProperties: { ...first!.additionalProperties, [DURABLE_TURN_KEY]: key } };
    // An in-memory store lives in the workflow's memory, rebuilt by each replay: appended every time, never recorded.
    if (store.type === 'in-memory') return store.addMessages([marked, ...rest]);
    await DBOS.runStep(
      async () => {
        // A process killed after the store wrote the turn, before DBOS recorded the step, runs
        // this again: the key in the thread says the turn is already there.
        const stored = await store.listMessages();
        if (stored.some((m) => m.additionalProperties?.[DURABLE_TURN_KEY] === key)) return;
        await store.addMessages([marked, ...rest]);
      },
      { name: 'skein.append' },
    );
  }
}

export function redacted(result: FunctionResultContent): FunctionResultContent {
  return { kind: 'function-result', callId: result.callId, ...(result.error !== undefined ? { error: UNRECORDED_RESULT } : { result: UNRECORDED_RESULT }) };
}

function stampCreatedAt(response: ChatResponse): ChatResponse {
  if (response.messages.every((m) => m.createdAt)) return response;
  const now = new Date().toISOString();
  return { ...response, messages: response.messages.map((m) => (m.createdAt ? m : { ...m, createdAt: now })) };
}
