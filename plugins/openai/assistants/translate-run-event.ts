import type OpenAI from 'openai';
import { type AgentRunResponseUpdate, type AIContent, type UsageDetails, addUsage } from 'skein';
import { OPENAI_ASSISTANTS_CLIENT_ID } from './openai-assistant-calls.js';
import { AssistantRunError } from './openai-assistant-errors.js';
import { annotationsJson } from './openai-assistant-files.js';

type Run = OpenAI.Beta.Threads.Run;
type StreamEvent = OpenAI.Beta.AssistantStreamEvent;

/** What a run in progress knows of itself on the service, for cancelling it when aborted. */
export interface LiveRun {
  runId?: string;
  threadId?: string;
}

/** Translates one SSE event; throws on a failed run; says when the run waits for tool outputs. */
export function translateRunEvent(
  event: StreamEvent,
  live: LiveRun,
  authorName: string | undefined,
  next: (u: AgentRunResponseUpdate) => void,
): 'requires_action' | 'completed' | undefined {
  switch (event.event) {
    case 'thread.run.created':
      live.runId = event.data.id;
      return undefined;
    case 'thread.message.delta':
      for (const part of event.data.delta.content ?? []) {
        if (part.type !== 'text' || !part.text?.value) continue;
        // Citations arrive on the delta that completes their marker; offsets are into the whole message.
        const annotations = annotationsJson(part.text.annotations);
        const content: AIContent = annotations.length ? { kind: 'text', text: part.text.value, additionalProperties: { annotations } } : { kind: 'text', text: part.text.value };
        next({ text: part.text.value, role: 'assistant', contents: [content], messageId: event.data.id, responseId: live.runId, ...(authorName ? { authorName } : {}) });
      }
      return undefined;
    case 'thread.run.step.delta': {
      const details = event.data.delta.step_details;
      if (details?.type !== 'tool_calls') return undefined;
      for (const c of details.tool_calls ?? []) {
        if (c.type !== 'function') continue;
        next({ text: '', role: 'assistant', contents: [], responseId: live.runId, toolCallDelta: { index: c.index, callId: c.id, name: c.function?.name ?? undefined, argumentsDelta: c.function?.arguments ?? '' } });
      }
      return undefined;
    }
    case 'thread.run.requires_action':
      return 'requires_action';
    case 'thread.run.completed': {
      const usage = usageOf(event.data);
      if (usage) next({ text: '', contents: [{ kind: 'usage', usage }], responseId: event.data.id });
      return 'completed';
    }
    case 'thread.run.failed':
    case 'thread.run.cancelled':
    case 'thread.run.expired':
    case 'thread.run.incomplete':
      throw runError(event.data);
    default:
      return undefined;
  }
}

/** The typed error of a run that ended failed, cancelled, expired or incomplete. */
export function runError(run: Run): AssistantRunError {
  const lastError = run.last_error ? { code: run.last_error.code, message: run.last_error.message } : run.incomplete_details ? { message: `incomplete: ${run.incomplete_details.reason}` } : undefined;
  return new AssistantRunError(OPENAI_ASSISTANTS_CLIENT_ID, run.id, run.thread_id, run.status, lastError);
}

export function usageOf(run: Run): UsageDetails | undefined {
  if (!run.usage) return undefined;
  return addUsage(undefined, { inputTokens: run.usage.prompt_tokens, outputTokens: run.usage.completion_tokens, totalTokens: run.usage.total_tokens });
}
