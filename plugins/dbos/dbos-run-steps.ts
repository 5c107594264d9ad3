import type { AITool, ChatMessage, ChatMessageStore, ChatResponse, FunctionCallContent, FunctionResultContent, RunSteps } from 'skein';
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
  stream: boolean;
}

/**
 * The DBOS side of the RunSteps seam, for one turn of one run inside its workflow: a model call
 * and a tool call are each one step (their results recorded, so a replay never repeats them), the
 * append of the turn a step that checks the thread for the turn's key first, so it lands once.
 */
export class DbosRunSteps implements RunSteps {
  readonly #options: DbosRunStepsOptions;

  constructor(options: DbosRunStepsOptions) {
    this.#options = options;
  }

  async callModel(call: () => Promise<ChatResponse>): Promise<ChatResponse> {
    // Stamped inside the step, so a replay sees the times the first run recorded.
    const response = await DBOS.runStep(async () => stampCreatedAt(await call()), { name: 'skein.model' });
    // Written by the workflow after the step, so a replayed model call never writes its reply twice.
    if (this.#options.stream) for (const message of response.messages) await DBOS.writeStream(UPDATES_STREAM, toStreamUpdate(message));
    return response;
  }

  async invokeTool(call: FunctionCallContent, tool: AITool, invoke: (idempotencyKey: string) => Promise<FunctionResultContent>): Promise<FunctionResultContent> {
    const key = `${this.#options.runId}:${call.callId}`;
    const recorded = !this.#options.unrecordedTools.has(tool.declaration.name);
    const result = recorded ? await DBOS.runStep(() => invoke(key), { name: `skein.tool:${tool.declaration.name}` }) : await invoke(key);
    if (this.#options.stream) {
      const shown = recorded ? result : redacted(result);
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
