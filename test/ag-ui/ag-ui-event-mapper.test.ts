import { verifyEvents } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { expect } from 'chai';
import { from } from 'rxjs';
import type { AgentRunResponseUpdate } from 'skein';
import { AgUiEventMapper } from 'skein/ag-ui';

/** The mapper's events for `updates`, bracketed by a run, through @ag-ui/client's own verifier. */
async function verified(updates: AgentRunResponseUpdate[]): Promise<BaseEvent[]> {
  let n = 0;
  const mapper = new AgUiEventMapper(() => `id-${++n}`);
  const events: BaseEvent[] = [{ type: 'RUN_STARTED', threadId: 't', runId: 'r' } as BaseEvent, ...updates.flatMap((u) => mapper.map(u)), ...mapper.finish(), { type: 'RUN_FINISHED', threadId: 't', runId: 'r' } as BaseEvent];
  // @ag-ui/client has its own copy of rxjs: the same Observable at run time, another type.
  const source = from(events) as unknown as Parameters<ReturnType<typeof verifyEvents>>[0];
  const out: BaseEvent[] = [];
  await new Promise<void>((resolve, reject) => verifyEvents(false)(source).subscribe({ next: (e) => void out.push(e), error: reject, complete: resolve }));
  return out;
}

describe('skein/ag-ui: AgUiEventMapper (updates to events, checked by the official verifier)', () => {
  it('reasoning, then text, then a streamed tool call and its result, each opened and closed in order', async () => {
    const events = await verified([
      { text: '', contents: [{ kind: 'reasoning', text: 'The user wants ' }], role: 'assistant', messageId: 'm1' },
      { text: '', contents: [{ kind: 'reasoning', text: 'the weather.' }], role: 'assistant', messageId: 'm1' },
      { text: 'Let me check.', contents: [{ kind: 'text', text: 'Let me check.' }], role: 'assistant', messageId: 'm1' },
      { text: '', contents: [], role: 'assistant', messageId: 'm1', toolCallDelta: { index: 0, callId: 'c1', name: 'get_weather', argumentsDelta: '{"city":' } },
      { text: '', contents: [], role: 'assistant', messageId: 'm1', toolCallDelta: { index: 0, argumentsDelta: '"Paris"}' } },
      { text: '', contents: [{ kind: 'function-call', callId: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }], role: 'assistant', messageId: 'm1' },
      { text: '', contents: [{ kind: 'function-result', callId: 'c1', result: 'Sunny' }], role: 'tool' },
      { text: 'It is sunny.', contents: [{ kind: 'text', text: 'It is sunny.' }, { kind: 'usage', usage: { inputTokens: 3, outputTokens: 4 } }], role: 'assistant', messageId: 'm2' },
    ]);
    expect(events.map((e) => e.type)).to.deep.equal([
      'RUN_STARTED',
      'STEP_STARTED',
      'REASONING_START',
      'REASONING_MESSAGE_START',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_END',
      'REASONING_END',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'STEP_FINISHED',
      'STEP_STARTED',
      'TOOL_CALL_RESULT',
      'STEP_FINISHED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    // Each model call and each round of tool results is a step, named in order.
    expect(events.filter((e) => e.type.startsWith('STEP_')).map((e) => `${e.type} ${(e as { stepName?: string }).stepName}`)).to.deep.equal([
      'STEP_STARTED model-call-1',
      'STEP_FINISHED model-call-1',
      'STEP_STARTED tool-round-1',
      'STEP_FINISHED tool-round-1',
      'STEP_STARTED model-call-2',
      'STEP_FINISHED model-call-2',
    ]);
    expect(events[11]).to.deep.include({ toolCallId: 'c1', toolCallName: 'get_weather', parentMessageId: 'm1' });
    expect(events[17]).to.deep.include({ messageId: 'c1-result', toolCallId: 'c1', content: 'Sunny' });
  });

  it('a call that arrives whole gets its arguments in one piece; text without ids gets one made up', async () => {
    const events = await verified([
      { text: 'Hi', contents: [{ kind: 'text', text: 'Hi' }], role: 'assistant' },
      { text: ' there', contents: [{ kind: 'text', text: ' there' }], role: 'assistant' },
      { text: '', contents: [{ kind: 'function-call', callId: 'c2', name: 'delete_file', arguments: '{"path":"/x"}' }], role: 'assistant' },
    ]);
    expect(events.map((e) => e.type)).to.deep.equal(['RUN_STARTED', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'STEP_FINISHED', 'RUN_FINISHED']);
    expect(events[2]).to.deep.include({ messageId: 'id-1' });
    expect(events[6]).to.deep.include({ parentMessageId: 'id-1' });
    expect(events[7]).to.deep.include({ delta: '{"path":"/x"}' });
  });

  it('a run that starts with tool results (an approved call) starts with a tool round; a second call of the same round keeps it open', async () => {
    const events = await verified([
      { text: '', contents: [{ kind: 'function-result', callId: 'c1', result: 'deleted' }], role: 'tool' },
      { text: '', contents: [{ kind: 'function-result', callId: 'c2', result: 'deleted too' }], role: 'tool' },
      { text: 'Done.', contents: [{ kind: 'text', text: 'Done.' }], role: 'assistant', messageId: 'm3' },
    ]);
    expect(events.map((e) => `${e.type}${(e as { stepName?: string }).stepName ? ` ${(e as { stepName?: string }).stepName}` : ''}`)).to.deep.equal([
      'RUN_STARTED',
      'STEP_STARTED tool-round-1',
      'TOOL_CALL_RESULT',
      'TOOL_CALL_RESULT',
      'STEP_FINISHED tool-round-1',
      'STEP_STARTED model-call-1',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED model-call-1',
      'RUN_FINISHED',
    ]);
  });
});
