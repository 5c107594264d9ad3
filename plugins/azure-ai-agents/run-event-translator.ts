import type {
  AgentEventMessage,
  MessageDeltaChunk,
  RequiredFunctionToolCall,
  RunStepDeltaChunk,
  RunStepDeltaToolCallObject,
  SubmitToolOutputsAction,
  ThreadRun,
} from '@azure/ai-agents';
import { type AIContent, type ChatResponseUpdate, ConnectionError, ServiceError, type UsageDetails } from 'skein';
import { FoundryRunError } from './azure-ai-agents-errors.js';

/** Folds a run's SSE events into Skein updates, tool calls included. */
export class RunEventTranslator {
  #end: { kind: 'completed' | 'incomplete' | 'requires_action'; runId: string } | undefined;

  constructor(
    private readonly provider: string,
    private readonly threadId: string,
    private readonly agentId: string,
  ) {}

  next(event: AgentEventMessage): { updates: ChatResponseUpdate[]; done: boolean } {
    const base = { conversationId: this.threadId };
    switch (event.event) {
      case 'thread.run.created':
      case 'thread.run.queued':
      case 'thread.run.in_progress': {
        const run = event.data as ThreadRun;
        return { updates: [{ ...base, contents: [], responseId: run.id, modelId: run.model }], done: false };
      }
      case 'thread.message.delta': {
        const chunk = event.data as MessageDeltaChunk;
        const contents: AIContent[] = [];
        for (const part of chunk.delta.content ?? []) {
          if (part.type === 'text') {
            const value = (part as { text?: { value?: string } }).text?.value;
            if (value) contents.push({ kind: 'text', text: value });
          }
        }
        return { updates: contents.length ? [{ ...base, role: 'assistant', contents, messageId: chunk.id }] : [], done: false };
      }
      case 'thread.run.step.delta': {
        const chunk = event.data as RunStepDeltaChunk;
        const details = chunk.delta.stepDetails as RunStepDeltaToolCallObject | undefined;
        if (details?.type !== 'tool_calls') return { updates: [], done: false };
        const updates: ChatResponseUpdate[] = [];
        for (const call of details.toolCalls ?? []) {
          if (call.type !== 'function') continue;
          const fn = (call as { function?: { name?: string; arguments?: string } }).function;
          updates.push({
            ...base,
            role: 'assistant',
            contents: [],
            toolCallDelta: { index: call.index, callId: call.id, name: fn?.name, argumentsDelta: fn?.arguments ?? '' },
          });
        }
        return { updates, done: false };
      }
      case 'thread.run.requires_action': {
        const run = event.data as ThreadRun;
        this.#end = { kind: 'requires_action', runId: run.id };
        return {
          updates: [{ ...base, role: 'assistant', contents: requiredCalls(run), messageId: run.id, responseId: run.id, finishReason: 'tool_calls', continuation: this.#continuation(run) }],
          done: false,
        };
      }
      case 'thread.run.completed':
      case 'thread.run.incomplete': {
        const run = event.data as ThreadRun;
        this.#end = { kind: event.event === 'thread.run.completed' ? 'completed' : 'incomplete', runId: run.id };
        const usage = usageOf(run);
        return {
          updates: [{
            ...base,
            contents: usage ? [{ kind: 'usage', usage }] : [],
            responseId: run.id,
            finishReason: event.event === 'thread.run.completed' ? 'stop' : 'incomplete',
            continuation: this.#continuation(run),
          }],
          done: false,
        };
      }
      case 'thread.run.failed':
      case 'thread.run.cancelled':
      case 'thread.run.expired':
        throw runError(this.provider, event.data as ThreadRun);
      case 'error': {
        const data = event.data as { error?: { message?: string } } | string;
        const message = typeof data === 'string' ? data : (data.error?.message ?? JSON.stringify(data));
        throw new ServiceError(this.provider, `${this.provider} sent an error event on thread ${this.threadId}: ${message}`);
      }
      case 'done':
        return { updates: [], done: true };
      default:
        return { updates: [], done: false };
    }
  }

  finish(): { kind: 'completed' | 'incomplete' | 'requires_action'; runId: string } {
    if (!this.#end) {
      throw new ConnectionError(this.provider, `The ${this.provider} run stream on thread ${this.threadId} ended before the run did (no completed, requires_action or failure event).`);
    }
    return this.#end;
  }

  #continuation(run: ThreadRun) {
    return { agentId: this.agentId, runId: run.id };
  }
}

/** The typed error of a run that ended failed, cancelled or expired, with what to do next. */
export function runError(provider: string, run: ThreadRun): FoundryRunError {
  const status = run.status as 'failed' | 'cancelled' | 'expired';
  const reason = run.lastError ? `: ${run.lastError.code} — ${run.lastError.message}` : '';
  const advice =
    status === 'failed' ? 'See the run in the Foundry portal; retry the turn if the failure was transient.'
      : status === 'expired' ? 'Its tool outputs came too late or it ran past its deadline; run the turn again.'
        : 'It was cancelled outside this turn; run the turn again.';
  return new FoundryRunError(provider, run.threadId, run.id, status, run.lastError?.code, `Foundry run ${run.id} on thread ${run.threadId} ended "${status}"${reason}. ${advice}`);
}

/** The function calls a run waits for, as Skein contents. */
export function requiredCalls(run: ThreadRun): Extract<AIContent, { kind: 'function-call' }>[] {
  const action = run.requiredAction as SubmitToolOutputsAction | null | undefined;
  const calls = action?.type === 'submit_tool_outputs' ? action.submitToolOutputs.toolCalls : [];
  return calls
    .filter((c): c is RequiredFunctionToolCall => c.type === 'function')
    .map((c) => ({ kind: 'function-call' as const, callId: c.id, name: c.function.name, arguments: c.function.arguments }));
}

export function usageOf(run: ThreadRun): UsageDetails | undefined {
  if (!run.usage) return undefined;
  return { inputTokens: run.usage.promptTokens, outputTokens: run.usage.completionTokens, totalTokens: run.usage.totalTokens };
}
